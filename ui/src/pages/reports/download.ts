import { ApiError, getToken } from '../../api';

export const FORMATS = [
  { ftype: 'csv', label: 'CSV' },
  { ftype: 'xlsx', label: 'Excel (xlsx)' },
  { ftype: 'docx', label: 'Word (docx)' },
  { ftype: 'pdf', label: 'PDF' },
  { ftype: 'json', label: 'JSON' },
  { ftype: 'ndjson', label: 'NDJSON' },
] as const;

/** The browser's IANA time zone (times in files are shown in it). */
export const browserTimeZone = () => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
};

function filenameOf(disposition: string | null): string | null {
  if (!disposition) return null;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1]);
    } catch {
      // fall through to the plain name
    }
  }
  return /filename="?([^";]+)"?/i.exec(disposition)?.[1] ?? null;
}

/**
 * Downloads an API file: the token goes in the Authorization header, so the file is
 * fetched as a blob and saved through an object URL. Returns the file's name.
 */
export async function downloadFile(path: string, fallbackName: string): Promise<string> {
  const token = getToken();
  const res = await fetch(path, { headers: token ? { authorization: `token ${token}` } : {} });
  if (!res.ok) {
    let detail = `${res.status} ${res.statusText}`.trim();
    try {
      const body = (await res.json()) as { detail?: unknown };
      if (typeof body.detail === 'string' && body.detail) detail = body.detail;
    } catch {
      // not JSON: the status line says it
    }
    throw new ApiError(res.status, detail);
  }
  const blob = await res.blob();
  const name = filenameOf(res.headers.get('content-disposition')) ?? fallbackName;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return name;
}
