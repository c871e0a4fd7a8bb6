// Talking to the JSON API: same-origin fetch with the CSRF header, errors as ApiError.

/** A failed request: the server's {"error": {code, message}}, or status 0 when it was not reached. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const UNREACHABLE = "Could not reach the server; check your connection and try again.";

export class Api {
  constructor(csrfToken) {
    this.csrfToken = csrfToken;
  }

  get(url) {
    return this.request("GET", url);
  }

  post(url, body = {}) {
    return this.request("POST", url, body);
  }

  patch(url, body) {
    return this.request("PATCH", url, body);
  }

  delete(url) {
    return this.request("DELETE", url);
  }

  /** The response's JSON; throws ApiError for a non-2xx answer or a network failure. */
  async request(method, url, body) {
    const headers = { Accept: "application/json" };
    if (method !== "GET") headers["X-CSRFToken"] = this.csrfToken;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(url, {
        method,
        headers,
        credentials: "same-origin",
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError(0, "network", UNREACHABLE);
    }
    const data = await response.json().catch(() => null);
    if (!response.ok) throw errorFrom(response.status, data);
    return data;
  }

  /**
   * POST one file as multipart field "file". XMLHttpRequest rather than fetch because only it
   * reports upload progress: onProgress(fraction 0..1). ``fields``: other form fields sent with it.
   */
  upload(url, file, onProgress, fields = {}) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", url);
      xhr.setRequestHeader("X-CSRFToken", this.csrfToken);
      xhr.setRequestHeader("Accept", "application/json");
      xhr.responseType = "json";
      xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
      xhr.onload = () =>
        xhr.status >= 200 && xhr.status < 300
          ? resolve(xhr.response)
          : reject(errorFrom(xhr.status, xhr.response));
      xhr.onerror = () => reject(new ApiError(0, "network", UNREACHABLE));
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      form.append("file", file);
      xhr.send(form);
    });
  }
}

function errorFrom(status, data) {
  const error = data?.error;
  if (error?.message) return new ApiError(status, error.code ?? "error", error.message);
  const message =
    status === 413 ? "The file is too large for the server." : `The request failed (HTTP ${status}).`;
  return new ApiError(status, "http_error", message);
}
