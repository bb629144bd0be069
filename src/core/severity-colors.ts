/**
 * Colours that mean what they say, shared by the report charts and the web UI's charts so
 * a report looks like the dashboard it came from: the worse the severity, the hotter the
 * colour (emergency, alert, critical red; error dark orange; warning amber), notice blue,
 * info a neutral grey and debug a light one. No imports: the UI's bundle takes it as is.
 */
export const SEVERITY_COLORS: Readonly<Record<string, string>> = {
  emergency: '#7f0000',
  alert: '#b71c1c',
  critical: '#d32f2f',
  error: '#e65100',
  warning: '#ffb300',
  notice: '#1e88e5',
  info: '#9e9e9e',
  debug: '#d9d9d9',
};

/** The colour of what is not one of the named values (other, none). */
export const OTHER_COLOR = '#8d6e63';
