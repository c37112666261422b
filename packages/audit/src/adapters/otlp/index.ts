/**
 * `@termgate/audit/otlp`: the trail's export as OpenTelemetry logs
 * (docs/AUDIT.md, "OpenTelemetry export"). A subpath of its own so that the
 * OpenTelemetry SDK loads only for `termgate audit export`, never for
 * `serve` or the other `audit` commands. For composition roots (the cli)
 * and tests, like `@termgate/audit/adapters`.
 */
export { OtlpLogExporter, type OtlpLogExporterOptions } from './otlp-log-exporter.js';
export { type CursorPosition, defaultCursorPath, TrailCursor } from './trail-cursor.js';
export { TrailExporter, type TrailExporterOptions } from './trail-exporter.js';
export { type FollowedRecord, TrailChainBroken, TrailFollower } from './trail-follower.js';
