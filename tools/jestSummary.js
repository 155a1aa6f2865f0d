// Ends a jest run with one plain line, `jest: N passed, N failed, N skipped`, that CI logs can be read by.
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests: passed, numFailedTests: failed, numPendingTests: skipped, numTodoTests: todo } = results;
    process.stdout.write(`jest: ${passed} passed, ${failed} failed, ${skipped + todo} skipped\n`);
  }
}
