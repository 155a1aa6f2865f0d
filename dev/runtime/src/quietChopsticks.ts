// chopsticks logs each block it builds, at a level read once when it loads: warnings and errors are what a test
// run wants to see. Imported before chopsticks.
process.env.LOG_LEVEL ??= 'warn';
