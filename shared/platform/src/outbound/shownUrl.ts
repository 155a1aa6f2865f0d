/**
 * A URL as it may be shown back (an API answer, a log line, a health report): credentials in it become `***`
 * (`https://***@host/path`), the rest stays as given. Text that is no URL is shown as it is.
 */
export function shownUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.username === '' && parsed.password === '') return url;
  return `${parsed.protocol}//***@${parsed.host}${parsed.pathname}${parsed.search}${parsed.hash}`;
}
