// OTLP metric and attribute names, translated as Prometheus does with UTF-8 allowed and
// suffixes added; the expected names follow its rules (unit table, `_total`, `_ratio`, each once).
import test from 'ava';
import { labelName, metricName } from '../../model/otlp/names.js';
import { plainNumber } from '../../model/otlp/samples.js';

test('units become suffixes, annotations and unit 1 add none', (t) => {
  t.is(metricName('http.server.request.duration', 's', 'histogram'), 'http.server.request.duration_seconds');
  t.is(metricName('system.network.io', 'By/s', 'gauge'), 'system.network.io_bytes_per_second');
  t.is(metricName('packets', '{packet}', 'counter'), 'packets_total');
  t.is(metricName('cpu.utilization', '1', 'gauge'), 'cpu.utilization_ratio');
  t.is(metricName('cpu.utilization', '1', 'counter'), 'cpu.utilization_total'); // _ratio on gauges only
  t.is(metricName('rate', 'm/min', 'gauge'), 'rate_meters_per_min'); // `min` is no per-unit: kept as written
  t.is(metricName('odd', 'furlongs', 'gauge'), 'odd_furlongs'); // unknown units are kept
});

test('suffixes are not doubled and keep their order: unit, per-unit, _total', (t) => {
  t.is(metricName('requests_total', '', 'counter'), 'requests_total');
  t.is(metricName('io_bytes', 'By', 'counter'), 'io_bytes_total');
  t.is(metricName('io.bytes_per_second', 'By/s', 'counter'), 'io.bytes_per_second_total');
  t.is(metricName('temp', 'Cel', 'gauge'), 'temp_celsius');
});

test('UTF-8 stays; only what a ferrite name cannot hold is replaced', (t) => {
  t.is(metricName('température.salle', 'Cel', 'gauge'), 'température.salle_celsius');
  t.is(metricName('a|ST[b]', '', 'gauge'), 'a_ST[b]');
  t.is(metricName('a|b', '', 'gauge'), 'a|b');
  t.is(metricName('nul\0here', '', 'gauge'), 'nul_here');
});

test("attribute names stay as they are, ferrite's reserved tag names prefixed", (t) => {
  t.is(labelName('http.route'), 'http.route');
  t.is(labelName('__name'), 'key__name');
  t.is(labelName('__check_uuid'), 'key__check_uuid');
});

test('`le` and `quantile` values print like Go FormatFloat(x, f, -1): no exponent', (t) => {
  t.is(plainNumber(0.005), '0.005');
  t.is(plainNumber(1e-7), '0.0000001');
  t.is(plainNumber(2.5e-8), '0.000000025');
  t.is(plainNumber(1e21), '1000000000000000000000');
  t.is(plainNumber(-1.5e22), '-15000000000000000000000');
  t.is(plainNumber(10), '10');
  t.is(plainNumber(Infinity), '+Inf');
});
