// The image's HEALTHCHECK: healthy while this node answers GET /stats.json on its own port.
// Plain JavaScript run by node, because the slim image has neither curl nor wget.
const host = [undefined, '', '0.0.0.0', '::'].includes(process.env.FERRITE_HOST) ? '127.0.0.1' : process.env.FERRITE_HOST;
const port = process.env.FERRITE_PORT || '8112';
const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/stats.json`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  if (!res.ok) console.error(`${url}: HTTP ${res.status}`);
  process.exit(res.ok ? 0 : 1);
} catch (error) {
  console.error(`${url}: ${error.cause?.message ?? error.message}`);
  process.exit(1);
}
