/** Saves `text` as a file named `name` of media type `type`, as the browser saves a download. */
export function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The click starts the download asynchronously: the URL must outlive it.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
