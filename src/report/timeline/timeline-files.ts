/**
 * The timeline's files in a run's results directory (`--timeline`): timeline.json (the Chrome
 * trace, timeline.ts) and timeline.html (the same drawn offline, timeline-html.ts).
 * Context: main thread.
 */
import { join } from 'node:path';
import { timelineRecordsFor } from '../../hw/timeline.js';
import { VERSION } from '../../version.js';
import { writeFileAtomic } from '../run/write.js';
import { TIMELINE_JSON, TimelineCollector } from './timeline.js';
import { renderTimelineHtml } from './timeline-html.js';

export const TIMELINE_HTML = 'timeline.html';

/**
 * What the timeline takes of a run's settings: `timeline` null (or absent) without `--timeline`,
 * else the window (`--timeline-window`, ms). The resolved config (src/config/schema.ts) has this
 * shape; declared here so that the report does not import the config.
 */
export interface TimelineSettings {
  readonly timeline?: { readonly windowMs: number } | null;
}

/** The collector a run with `--timeline` hands the harness; undefined without it. */
export function timelineCollectorFor(config: TimelineSettings): TimelineCollector | undefined {
  if (!config.timeline) return undefined;
  const w = config.timeline.windowMs;
  return new TimelineCollector(w, timelineRecordsFor(w), `deferlab ${VERSION}`);
}

/** Write timeline.json and timeline.html into `dir`; returns the line that says so. */
export async function writeTimeline(dir: string, c: TimelineCollector): Promise<string> {
  const file = c.file();
  await writeFileAtomic(join(dir, TIMELINE_JSON), JSON.stringify(file));
  await writeFileAtomic(join(dir, TIMELINE_HTML), renderTimelineHtml(file));
  const m = file.otherData;
  const lost = m.truncatedWindows.length
    ? `; ${m.truncatedWindows.length} trial windows lost their start to the rings (timeline.json, otherData.truncatedWindows)`
    : '';
  return `timeline: ${join(dir, TIMELINE_JSON)} (${m.trials} trials × the last ${m.windowMs} ms; open it in ui.perfetto.dev or chrome://tracing; ${TIMELINE_HTML} draws it offline)${lost}`;
}
