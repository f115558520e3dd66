// Two small SVG charts, drawn by hand (no library): events per second and projections' lag,
// each over the last 3 minutes.

const svgNS = 'http://www.w3.org/2000/svg';
/** The charts' span in seconds; also the width of their viewBox (one unit a second). */
export const span = 180;
const height = 60;
const colors = ['#2458c9', '#c4432b', '#1b7f3b', '#9a6700', '#7b3fb2', '#0f7c8c', '#b3306f', '#5b6b00', '#6b6b70', '#d46b08'];

function svg(tag, attributes) {
  const node = document.createElementNS(svgNS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

/** Events per second: one bar a second, counted by the time each event was recorded. */
export class RateChart {
  constructor(svgElement, peakElement) {
    this.svg = svgElement;
    this.peak = peakElement;
    this.counts = new Map();
  }

  /** Counts an event recorded at `time` (milliseconds). */
  add(time) {
    const second = Math.floor(time / 1000);
    this.counts.set(second, (this.counts.get(second) || 0) + 1);
  }

  /** Draws the last `span` seconds up to `now` (milliseconds) and forgets older ones. */
  draw(now) {
    const last = Math.floor(now / 1000);
    const first = last - span + 1;
    for (const second of this.counts.keys()) if (second < first) this.counts.delete(second);
    const peak = Math.max(1, ...this.counts.values());
    const bars = [];
    for (const [second, count] of this.counts) {
      if (second > last) continue;
      const barHeight = (count / peak) * (height - 2);
      const bar = svg('rect', { class: 'bar', x: second - first, y: height - barHeight, width: 0.85, height: barHeight });
      bar.append(svg('title', {}));
      bar.firstChild.textContent = `${count} event${count === 1 ? '' : 's'} at ${new Date(second * 1000).toLocaleTimeString()}`;
      bars.push(bar);
    }
    this.svg.replaceChildren(...bars);
    this.peak.textContent = String(this.counts.size ? Math.max(...this.counts.values()) : 0);
  }
}

/** Each projection's lag, sampled over time: one line per projection, one colour each. */
export class LagChart {
  constructor(svgElement, legendElement) {
    this.svg = svgElement;
    this.legend = legendElement;
    this.samples = new Map();
  }

  /** Keeps `statuses` (GET /projections) as the sample at `now` (milliseconds). */
  add(now, statuses) {
    for (const status of statuses) {
      const series = this.samples.get(status.name) || [];
      series.push([now, status.lag]);
      while (series.length && series[0][0] < now - span * 1000) series.shift();
      this.samples.set(status.name, series);
    }
  }

  draw(now) {
    const start = now - span * 1000;
    let peak = 1;
    for (const series of this.samples.values()) for (const [, lag] of series) peak = Math.max(peak, lag);
    const lines = [];
    const entries = [];
    [...this.samples.keys()].forEach((name, index) => {
      const color = colors[index % colors.length];
      const points = this.samples.get(name)
        .map(([time, lag]) => `${((time - start) / 1000).toFixed(2)},${(height - 1 - (lag / peak) * (height - 2)).toFixed(2)}`);
      const line = svg('polyline', { points: points.join(' '), stroke: color });
      lines.push(line);
      const latest = this.samples.get(name).at(-1);
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = color;
      const entry = document.createElement('li');
      entry.append(swatch, `${name}: ${latest ? latest[1] : 0}`);
      entries.push(entry);
    });
    this.svg.replaceChildren(...lines);
    this.legend.replaceChildren(...entries);
  }
}
