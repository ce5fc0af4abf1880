// OTLP/HTTP request bodies (logs and metrics, JSON or protobuf, optionally
// gzip) → flat records for src/integrations/otlp.ts.
//
// The protobuf schema is the published OTLP one (opentelemetry-proto:
// collector/logs/v1, collector/metrics/v1, logs/v1, metrics/v1, common/v1,
// resource/v1), written down here as a protobufjs descriptor with the fields
// Roost reads; protobufjs skips every field a descriptor does not name
// (histograms, exemplars, trace ids), so they cost their bytes and nothing
// more. Field names are the JSON encoding's (lowerCamelCase), so a decoded
// protobuf message and a parsed JSON body are walked by the same code.
//
// Bounded cost: the body is capped before decoding (OTLP_MAX_BYTES, and the
// same after gunzip, so a small bomb cannot inflate), decoding is linear in
// the body, the walk stops at OTLP_LIMITS.records records (the request is
// then refused, nothing stored), and only scalar attribute values are kept
// (a nested value is dropped, never walked).

import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { OTLP_LIMITS, type OtlpLog, type Scalar } from '../integrations/otlp.js';
import { HttpError } from './http.js';

/** The largest OTLP body accepted, compressed or not (Codex sends ~700 KB of metrics at a time). */
export const OTLP_MAX_BYTES = 4 * 1024 * 1024;

const KV = { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } };
const DESCRIPTOR = {
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
            arrayValue: { type: 'ArrayValue', id: 5 },
            kvlistValue: { type: 'KeyValueList', id: 6 },
            bytesValue: { type: 'bytes', id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        KeyValue: KV,
        Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        InstrumentationScope: { fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
        LogRecord: {
          fields: {
            timeUnixNano: { type: 'fixed64', id: 1 },
            severityNumber: { type: 'int32', id: 2 },
            severityText: { type: 'string', id: 3 },
            body: { type: 'AnyValue', id: 5 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 6 },
            observedTimeUnixNano: { type: 'fixed64', id: 11 },
            eventName: { type: 'string', id: 12 },
          },
        },
        ScopeLogs: { fields: { scope: { type: 'InstrumentationScope', id: 1 }, logRecords: { rule: 'repeated', type: 'LogRecord', id: 2 } } },
        ResourceLogs: { fields: { resource: { type: 'Resource', id: 1 }, scopeLogs: { rule: 'repeated', type: 'ScopeLogs', id: 2 } } },
        ExportLogsServiceRequest: { fields: { resourceLogs: { rule: 'repeated', type: 'ResourceLogs', id: 1 } } },
        NumberDataPoint: {
          fields: {
            startTimeUnixNano: { type: 'fixed64', id: 2 },
            timeUnixNano: { type: 'fixed64', id: 3 },
            asDouble: { type: 'double', id: 4 },
            asInt: { type: 'sfixed64', id: 6 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 7 },
          },
        },
        Gauge: { fields: { dataPoints: { rule: 'repeated', type: 'NumberDataPoint', id: 1 } } },
        Sum: { fields: { dataPoints: { rule: 'repeated', type: 'NumberDataPoint', id: 1 }, aggregationTemporality: { type: 'int32', id: 2 }, isMonotonic: { type: 'bool', id: 3 } } },
        Metric: { fields: { name: { type: 'string', id: 1 }, description: { type: 'string', id: 2 }, unit: { type: 'string', id: 3 }, gauge: { type: 'Gauge', id: 5 }, sum: { type: 'Sum', id: 7 } } },
        ScopeMetrics: { fields: { scope: { type: 'InstrumentationScope', id: 1 }, metrics: { rule: 'repeated', type: 'Metric', id: 2 } } },
        ResourceMetrics: { fields: { resource: { type: 'Resource', id: 1 }, scopeMetrics: { rule: 'repeated', type: 'ScopeMetrics', id: 2 } } },
        ExportMetricsServiceRequest: { fields: { resourceMetrics: { rule: 'repeated', type: 'ResourceMetrics', id: 1 } } },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(DESCRIPTOR);
const LogsRequest = root.lookupType('otlp.ExportLogsServiceRequest');
const MetricsRequest = root.lookupType('otlp.ExportMetricsServiceRequest');
const TO_OBJECT = { longs: String, enums: Number, bytes: String, defaults: false, arrays: true } as const;

export type OtlpEncoding = 'json' | 'protobuf';

/** The body's encoding from its Content-Type, or a 415. */
export function encodingOf(contentType: string | undefined): OtlpEncoding {
  const ct = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (ct === 'application/json') return 'json';
  if (ct === 'application/x-protobuf' || ct === 'application/protobuf') return 'protobuf';
  throw new HttpError(415, 'unsupported_media_type', 'OTLP/HTTP bodies are application/json or application/x-protobuf');
}

/** gunzip with the same cap as the body (a 4 MB bomb never inflates past it). */
export function inflate(body: Buffer, contentEncoding: string | undefined): Buffer {
  const ce = (contentEncoding ?? '').trim().toLowerCase();
  if (!ce || ce === 'identity') return body;
  if (ce !== 'gzip') throw new HttpError(415, 'unsupported_media_type', `Content-Encoding ${ce.slice(0, 40)} is not supported (gzip or none)`);
  try {
    return gunzipSync(body, { maxOutputLength: OTLP_MAX_BYTES });
  } catch (e) {
    const tooBig = (e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    throw new HttpError(tooBig ? 413 : 400, tooBig ? 'too_large' : 'bad_request', tooBig ? `the gzip body inflates past ${OTLP_MAX_BYTES} bytes` : 'the gzip body could not be inflated');
  }
}

function parse(body: Buffer, enc: OtlpEncoding, type: protobuf.Type, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = enc === 'json' ? JSON.parse(body.toString('utf8')) : type.toObject(type.decode(body), TO_OBJECT);
  } catch (e) {
    throw new HttpError(400, 'bad_request', `not an OTLP ${what} request (${enc}): ${String((e as Error).message ?? e).slice(0, 200)}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new HttpError(400, 'bad_request', `an OTLP ${what} request is a JSON object`);
  return v as Record<string, unknown>;
}

function list(v: unknown, what: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new HttpError(400, 'bad_request', `${what} must be an array`);
  return v;
}

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** An AnyValue's scalar (int64 may come as a string in JSON and from protobufjs); nested values are dropped. */
function scalar(v: unknown): Scalar | undefined {
  const o = obj(v);
  if (typeof o.stringValue === 'string') return o.stringValue.slice(0, OTLP_LIMITS.string * 4);
  if (typeof o.boolValue === 'boolean') return o.boolValue;
  if (typeof o.doubleValue === 'number') return o.doubleValue;
  if (typeof o.intValue === 'number') return o.intValue;
  if (typeof o.intValue === 'string' && /^-?\d{1,20}$/.test(o.intValue)) return Number(o.intValue);
  return undefined;
}

function attrsOf(v: unknown): Map<string, Scalar> {
  const m = new Map<string, Scalar>();
  const kvs = Array.isArray(v) ? v : [];
  for (let i = 0; i < kvs.length && m.size < OTLP_LIMITS.attrs; i++) {
    const kv = obj(kvs[i]);
    if (typeof kv.key !== 'string' || kv.key.length > 200) continue;
    const s = scalar(kv.value);
    if (s !== undefined) m.set(kv.key, s);
  }
  return m;
}

function nanosToMs(v: unknown): number {
  const s = typeof v === 'number' ? String(Math.floor(v)) : typeof v === 'string' ? v : '';
  if (!/^\d{1,20}$/.test(s)) return 0;
  return s.length > 6 ? Number(s.slice(0, s.length - 6)) : 0;
}

/** Counts records and refuses a request past the cap (413: nothing is stored). */
function counter(): () => void {
  let n = 0;
  return () => {
    if (++n > OTLP_LIMITS.records) throw new HttpError(413, 'too_large', `an OTLP request may carry at most ${OTLP_LIMITS.records} records; send smaller batches`);
  };
}

/** Decodes an ExportLogsServiceRequest into flat records (a 400/413/415 says what is wrong). */
export function decodeLogs(body: Buffer, enc: OtlpEncoding): OtlpLog[] {
  const req = parse(body, enc, LogsRequest, 'logs');
  const out: OtlpLog[] = [];
  const tick = counter();
  for (const rl of list(req.resourceLogs, 'resourceLogs')) {
    const res = attrsOf(obj(obj(rl).resource).attributes);
    const service = typeof res.get('service.name') === 'string' ? (res.get('service.name') as string).slice(0, 80) : '';
    for (const sl of list(obj(rl).scopeLogs, 'scopeLogs')) {
      for (const lr of list(obj(sl).logRecords, 'logRecords')) {
        tick();
        const r = obj(lr);
        const attrs = attrsOf(r.attributes);
        const body = scalar(r.body);
        const event = typeof attrs.get('event.name') === 'string' ? (attrs.get('event.name') as string) : typeof r.eventName === 'string' && r.eventName ? r.eventName : typeof body === 'string' ? body : '';
        out.push({ service, event: event.slice(0, 120), attrs, timeMs: nanosToMs(r.timeUnixNano) || nanosToMs(r.observedTimeUnixNano) });
      }
    }
  }
  return out;
}

export interface OtlpPoint {
  service: string;
  metric: string;
  value: number;
  attrs: Map<string, Scalar>;
}

/** Decodes an ExportMetricsServiceRequest's sum and gauge points (other kinds are skipped). */
export function decodeMetrics(body: Buffer, enc: OtlpEncoding): OtlpPoint[] {
  const req = parse(body, enc, MetricsRequest, 'metrics');
  const out: OtlpPoint[] = [];
  const tick = counter();
  for (const rm of list(req.resourceMetrics, 'resourceMetrics')) {
    const res = attrsOf(obj(obj(rm).resource).attributes);
    const service = typeof res.get('service.name') === 'string' ? (res.get('service.name') as string).slice(0, 80) : '';
    for (const sm of list(obj(rm).scopeMetrics, 'scopeMetrics')) {
      for (const m of list(obj(sm).metrics, 'metrics')) {
        const mo = obj(m);
        const data = obj(mo.sum ?? mo.gauge);
        for (const dp of list(data.dataPoints, 'dataPoints')) {
          tick();
          const d = obj(dp);
          const v = typeof d.asDouble === 'number' ? d.asDouble : typeof d.asInt === 'number' ? d.asInt : typeof d.asInt === 'string' ? Number(d.asInt) : NaN;
          if (!Number.isFinite(v)) continue;
          out.push({ service, metric: typeof mo.name === 'string' ? mo.name.slice(0, 200) : '', value: v, attrs: attrsOf(d.attributes) });
        }
      }
    }
  }
  return out;
}

/** Encodes a logs request as protobuf (for tests and the bench: the same schema both ways). */
export function encodeLogsProtobuf(request: Record<string, unknown>): Buffer {
  return Buffer.from(LogsRequest.encode(LogsRequest.fromObject(request)).finish());
}
