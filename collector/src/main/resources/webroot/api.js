// The collector's JSON API as the page uses it (docs/API.md). Every request is same-origin and uncached.

/** GET a JSON body; a refusal rejects with an Error carrying status and the API's {"error": "…"} body. */
export function getJson(url) {
  return fetch(url, { headers: { 'Accept': 'application/json' }, cache: 'no-store' }).then((res) => {
    if (!res.ok) {
      const err = new Error(url + ' answered ' + res.status);
      err.status = res.status;
      // Keep the body so callers can tell one refusal from another.
      return res.text().then((text) => {
        try { err.body = JSON.parse(text); } catch (e) { err.body = null; }
        throw err;
      }, () => { throw err; });
    }
    return res.json();
  });
}

export function runsUrl() { return '/v1/runs'; }
export function runUrl(id) { return '/v1/runs/' + encodeURIComponent(id); }
export function historyUrl() { return '/v1/history'; }

/** The run re-priced on each of the GPUs (GET /v1/runs/{id}/plans), at its own GPU count and batch. */
export function plansUrl(id, gpus) {
  return runUrl(id) + '/plans?gpu=' + gpus.map(encodeURIComponent).join(',');
}

/** The run's series (GET /v1/runs/{id}/series) without per-GPU series; sinceMs limits it to what is new. */
export function seriesUrl(id, maxPoints, sinceMs) {
  return runUrl(id) + '/series?gpus=false&max_points=' + maxPoints + (sinceMs !== null ? '&since=' + sinceMs : '');
}

/** A calibration change: resolves to {ok, status, message}; rejects only when the collector did not answer. */
export function calibrationRequest(method, path) {
  return fetch(path, { method: method, cache: 'no-store' }).then((res) => res.text().then((text) => {
    let message = text;
    try { message = JSON.parse(text).error || text; } catch (e) { /* not JSON */ }
    return { ok: res.ok, status: res.status, message: message };
  }));
}
