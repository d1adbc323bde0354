/* nnergy HTML reports: what every kind's script shares.
 *
 * The page holds the command's JSON document in <script type="application/json" id="nnergy-data">
 * and one kind's script (predict.js, compare.js, ...), which calls NN.render(build): build(data)
 * adds sections, tables and charts to <main>. Charts are Vega-Lite (or Vega) specs drawn by
 * vegaEmbed as SVG. When every chart has settled, <body> gets the status attributes that
 * tests/report/html_reports_browser_test.py reads:
 *   data-nnergy-status   "ok", or "error" when any error was recorded (see report.html's catcher)
 *   data-rendered-ms     performance.now() when the last chart settled
 *   data-first-paint-ms  first-contentful-paint when the browser reports it, else the first
 *                        animation frame after the page's text was in place
 *                        (data-first-paint-source says which)
 *   data-warnings        how many console warnings the libraries gave (data-warning-text: the
 *                        first ones); not an error, but the test shows them
 * and #nnergy-errors lists every recorded error (empty when none). A chart whose SVG holds no
 * data mark is an error too (countMarks).
 *
 * Only ASCII in this file: non-ASCII characters are written as \u escapes.
 */
(function () {
  'use strict';

  const NN = {};
  window.NN = NN;

  // Characters used in labels.
  NN.PM = '\u00b1';
  NN.SIGMA = '\u03c3';
  NN.TIMES = '\u00d7';
  NN.DOT = '\u00b7';
  NN.DASH = '\u2013';
  NN.MICRO = '\u00b5';
  NN.ARROW = '\u203a';

  NN.error = function (message) {
    if (window.nnergyRecordError) window.nnergyRecordError(message);
    else (window.nnergyErrors = window.nnergyErrors || []).push(String(message));
  };

  // ---------------------------------------------------------------------------------------------
  // Numbers, as the CLI writes them (src/nnergy/report/quantity_format.cc).

  const PREFIXES = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, ''],
                    [1e-3, 'm'], [1e-6, NN.MICRO], [1e-9, 'n'], [1e-12, 'p']];

  const finite = (v) => typeof v === 'number' && isFinite(v);
  NN.finite = finite;

  // Three significant digits: 0.2504 -> "0.250", 1234.5 -> "1234".
  NN.sig = function (v) {
    if (!finite(v)) return NN.DASH;
    if (v === 0) return '0';
    let magnitude = Math.floor(Math.log10(Math.abs(v)));
    const unit = Math.pow(10, magnitude - 2);
    if (Math.abs(Math.round(v / unit) * unit) >= Math.pow(10, magnitude + 1)) magnitude += 1;
    return v.toFixed(Math.max(0, 2 - magnitude));
  };

  // The SI prefix for a magnitude: [scale, symbol] with |v| / scale in [1, 1000).
  NN.prefix = function (v) {
    const m = Math.abs(v);
    if (!finite(m) || m === 0) return [1, ''];
    // 0.9995 rather than 1 so that 999.6 becomes "1.00 k" rather than "1000".
    for (const p of PREFIXES) if (m >= p[0] * 0.9995) return p;
    return PREFIXES[PREFIXES.length - 1];
  };

  // (0.00802, 'J') -> "8.02 mJ"; (2.62e11, 'FLOP') -> "262 GFLOP"; 0 -> "0 J".
  NN.qty = function (v, unit) {
    if (!finite(v)) return NN.DASH;
    if (v === 0) return '0 ' + unit;
    const p = NN.prefix(v);
    return NN.sig(v / p[0]) + ' ' + p[1] + unit;
  };

  // "9.43 J \u00b1 3.83 J" when the standard deviation is known and not zero.
  NN.qtyStd = function (v, std, unit) {
    return finite(std) && std > 0 ? NN.qty(v, unit) + ' ' + NN.PM + ' ' + NN.qty(std, unit)
                                   : NN.qty(v, unit);
  };

  // Binary prefixes: 1.3e10 -> "12.1 GiB".
  NN.bytes = function (b) {
    if (!finite(b)) return NN.DASH;
    const names = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
    let v = b;
    let i = 0;
    while (Math.abs(v) >= 1023.5 && i + 1 < names.length) { v /= 1024; i += 1; }
    return (v === 0 ? '0' : NN.sig(v)) + ' ' + names[i] + 'B';
  };

  // 0.4709 -> "47.1 %".
  NN.pct = function (share) {
    return finite(share) ? NN.sig(100 * share) + ' %' : NN.DASH;
  };

  // A linear axis in a prefixed unit: the prefix that suits the largest value, e.g.
  // axisUnit([0.002, 0.03], 's') -> {scale: 1e-3, unit: 'ms'}; plot value / scale.
  NN.axisUnit = function (values, unit) {
    let max = 0;
    for (const v of values) if (finite(v)) max = Math.max(max, Math.abs(v));
    const p = NN.prefix(max);
    return {scale: p[0], unit: p[1] + unit};
  };

  // Whether a set of positive values spans more than `factor` (a log axis reads better then).
  NN.spans = function (values, factor) {
    const v = values.filter((x) => finite(x) && x > 0);
    return v.length > 1 && Math.max(...v) / Math.min(...v) > factor;
  };

  NN.truncate = function (text, n) {
    text = String(text);
    return text.length > n ? text.slice(0, n - 1) + '\u2026' : text;
  };

  // ---------------------------------------------------------------------------------------------
  // The document and the DOM.

  NN.data = function () {
    const element = document.getElementById('nnergy-data');
    if (!element) throw new Error('the page holds no #nnergy-data element');
    return JSON.parse(element.textContent);
  };

  // el('p', {class: 'note'}, 'text', childElement, ...): attributes, then children (strings
  // become text nodes; null and undefined are skipped).
  NN.el = function (tag, attributes) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value !== null && value !== undefined && value !== false) element.setAttribute(name, value);
    }
    for (let i = 2; i < arguments.length; i += 1) {
      const child = arguments[i];
      if (child === null || child === undefined) continue;
      element.append(child instanceof Node ? child : String(child));
    }
    return element;
  };

  const main = () => document.getElementById('nnergy-report');

  // <section id><h2>title</h2><p class="intro">intro</p></section>, appended to <main>.
  NN.section = function (id, title, intro) {
    const section = NN.el('section', {id: id}, NN.el('h2', {}, title));
    if (intro) section.append(NN.el('p', {class: 'intro'}, intro));
    main().append(section);
    return section;
  };

  // Cards: [{label, value, std, sub}] as a row of boxes; std (text) is shown after a plus-minus sign.
  NN.cards = function (parent, items) {
    const row = NN.el('div', {class: 'cards'});
    for (const item of items) {
      row.append(NN.el('div', {class: 'card', title: item.title},
                       NN.el('div', {class: 'label'}, item.label),
                       NN.el('div', {class: 'value'}, NN.el('span', {class: 'main'}, item.value),
                             item.std ? NN.el('span', {class: 'pm'}, ' ' + NN.PM + ' ' + item.std) : null),
                       item.sub ? NN.el('div', {class: 'sub'}, item.sub) : null));
    }
    parent.append(row);
    return row;
  };

  NN.list = function (parent, items, cls) {
    const ul = NN.el('ul', {class: 'notes' + (cls ? ' ' + cls : '')});
    for (const item of items) ul.append(NN.el('li', {}, item));
    parent.append(ul);
    return ul;
  };

  // A table. columns: [{label, value(row) (for sorting and display), format(value, row) -> text,
  // num (right-aligned), cls, title(row) (a cell's tooltip)}]; options.sortable: click a header
  // to sort; options.rowClass(row).
  NN.table = function (parent, columns, rows, options) {
    options = options || {};
    const table = NN.el('table', {class: 'data'});
    const head = NN.el('tr', {});
    const body = NN.el('tbody', {});
    const fill = (list) => {
      body.textContent = '';
      for (const row of list) {
        const tr = NN.el('tr', {class: options.rowClass ? options.rowClass(row) : null});
        for (const c of columns) {
          const value = c.value(row);
          const text = c.format ? c.format(value, row) : (value === null || value === undefined ? NN.DASH : value);
          tr.append(NN.el('td', {class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null,
                                 title: c.title ? c.title(row) : null}, text));
        }
        body.append(tr);
      }
    };
    columns.forEach((c) => {
      const th = NN.el('th', {class: (c.num ? 'num ' : '') + (options.sortable ? 'sortable' : ''),
                              title: c.help || null}, c.label);
      if (options.sortable) {
        th.addEventListener('click', () => {
          const descending = th.getAttribute('aria-sort') !== 'descending';
          head.querySelectorAll('th').forEach((other) => other.removeAttribute('aria-sort'));
          th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
          const key = (row) => c.value(row);
          const sorted = rows.slice().sort((a, b) => {
            const x = key(a);
            const y = key(b);
            const order = (typeof x === 'number' && typeof y === 'number') ? x - y
                          : String(x).localeCompare(String(y));
            return descending ? -order : order;
          });
          fill(sorted);
        });
      }
      head.append(th);
    });
    table.append(NN.el('thead', {}, head), body);
    fill(rows);
    const wrap = NN.el('div', {class: 'table-wrap'}, table);
    parent.append(wrap);
    return table;
  };

  // The width a chart's plot area may take: the content width less `reserve` pixels (axes,
  // legend), divided among `columns` charts side by side.
  NN.plotWidth = function (reserve, columns) {
    const content = Math.max(640, main().clientWidth - 48);  // main's padding
    const n = columns || 1;
    return Math.floor((content - (n - 1) * 24) / n - (reserve || 0));
  };

  // ---------------------------------------------------------------------------------------------
  // Charts.

  // Shared look of every Vega-Lite chart (a Vega spec sets its own).
  NN.config = {
    font: 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif',
    axis: {labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', titleColor: '#333',
           labelColor: '#444', gridColor: '#e8eaee'},
    legend: {labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', labelLimit: 260},
    header: {labelFontSize: 12, titleFontSize: 12},
    title: {fontSize: 13, fontWeight: 'normal', anchor: 'start'},
    view: {stroke: '#d9dde5'},
  };

  const pending = [];
  // Charts are drawn one after another, each in a task of its own, so that the browser can paint
  // the page's text and the first charts while the later ones are still being compiled.
  let queue = Promise.resolve();
  const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

  // Data marks are drawn in <g class="mark-... role-mark ..."> groups of Vega's SVG; axes,
  // legends and titles use other roles. A chart counts the drawing elements inside them: paths
  // with a non-empty "d", text with content, and every other shape. Zero is an error.
  const SHAPES = 'path, rect, line, circle, ellipse, polygon, polyline, text, image';
  function countMarks(container, inlineSvg) {
    const groups = inlineSvg ? container.querySelectorAll('svg') : container.querySelectorAll('g.role-mark');
    let count = 0;
    groups.forEach((group) => {
      group.querySelectorAll(SHAPES).forEach((shape) => {
        const tag = shape.tagName.toLowerCase();
        if (tag === 'path' && !(shape.getAttribute('d') || '').trim()) return;
        if (tag === 'text' && !shape.textContent.trim()) return;
        count += 1;
      });
    });
    return count;
  }
  NN.countMarks = countMarks;

  // A figure with a chart: <figure><div class="chart" data-chart=name>...</div><figcaption>.
  // spec: Vega-Lite unless options.mode is 'vega'. Returns a promise of vegaEmbed's result (with
  // its view), or of null when the chart failed (the error is recorded).
  NN.chart = function (parent, name, spec, caption, options) {
    options = options || {};
    const div = NN.el('div', {class: 'chart', 'data-chart': name});
    const figure = NN.el('figure', {}, div, caption ? NN.el('figcaption', {}, caption) : null);
    parent.append(figure);
    const mode = options.mode || 'vega-lite';
    if (mode === 'vega-lite') spec.config = Object.assign({}, NN.config, spec.config || {});
    const promise = queue.then(nextTask)
      .then(() => vegaEmbed(div, spec, {renderer: 'svg', actions: false, mode: mode}))
      .then((result) => {
        const marks = countMarks(div, false);
        div.setAttribute('data-marks', String(marks));
        if (marks === 0) NN.error('chart "' + name + '" drew no mark');
        return result;
      }, (error) => {
        NN.error('chart "' + name + '": ' + ((error && (error.stack || error.message)) || error));
        return null;
      });
    pending.push(promise);
    queue = promise;
    return promise;
  };

  // A chart that is a finished SVG (archline plot): the markup is inserted as it is, scaled to
  // the page's width; a button shows it at its own size (scrolling sideways).
  NN.svgChart = function (parent, name, svgMarkup, caption) {
    const div = NN.el('div', {class: 'chart static', 'data-chart': name});
    // innerHTML parses SVG in an HTML document; an XML prolog would become a comment node.
    const start = svgMarkup.indexOf('<svg');
    div.innerHTML = start >= 0 ? svgMarkup.slice(start) : svgMarkup;
    const button = NN.el('button', {type: 'button', class: 'size-toggle'}, 'show at full size');
    button.addEventListener('click', () => {
      const full = div.classList.toggle('full-size');
      button.textContent = full ? 'fit to the page' : 'show at full size';
    });
    parent.append(NN.el('figure', {}, button, div, caption ? NN.el('figcaption', {}, caption) : null));
    const marks = countMarks(div, true);
    div.setAttribute('data-marks', String(marks));
    if (marks === 0) NN.error('chart "' + name + '" drew no mark');
    return div;
  };

  // ---------------------------------------------------------------------------------------------
  // The page around the sections, and the status protocol.

  function header(data) {
    document.getElementById('nnergy-title').textContent = document.title;
    const c = data.context || {};
    const parts = [];
    if (c.command_line) parts.push(NN.el('code', {}, c.command_line));
    const when = [c.tool && c.tool_version ? c.tool + ' ' + c.tool_version : null, c.date_utc]
      .filter(Boolean).join(', ');
    const line = document.getElementById('nnergy-context');
    parts.forEach((p) => line.append(p, ' '));
    if (when) line.append(NN.el('span', {}, '(' + when + ')'));
    const libraries = [];
    if (window.vega) libraries.push('Vega ' + vega.version);
    if (window.vegaLite) libraries.push('Vega-Lite ' + vegaLite.version);
    if (window.vegaEmbed) libraries.push('vega-embed ' + vegaEmbed.version);
    document.getElementById('nnergy-footer').textContent =
      'Written by nnergy; a self-contained page that loads nothing from the network. Charts: ' +
      (libraries.join(', ') || 'the chart libraries did not load') + '.';
  }

  // First paint: the browser's first-contentful-paint entry when it has one (headless browsers
  // often report none), else the first animation frame after the page's text was in place.
  let firstFrameMs = null;
  function setFirstPaint() {
    const body = document.body;
    const entries = performance.getEntriesByType ? performance.getEntriesByType('paint') : [];
    const fcp = entries.find((e) => e.name === 'first-contentful-paint');
    if (fcp) {
      body.setAttribute('data-first-paint-ms', fcp.startTime.toFixed(1));
      body.setAttribute('data-first-paint-source', 'first-contentful-paint');
    } else if (firstFrameMs !== null && !body.hasAttribute('data-first-paint-ms')) {
      body.setAttribute('data-first-paint-ms', firstFrameMs.toFixed(1));
      body.setAttribute('data-first-paint-source', 'first animation frame');
    }
  }

  function finish() {
    Promise.allSettled(pending).then(() => {
      const body = document.body;
      const errors = window.nnergyErrors || [];
      document.getElementById('nnergy-errors').textContent = errors.join('\n');
      body.setAttribute('data-rendered-ms', performance.now().toFixed(1));
      body.setAttribute('data-charts', String(document.querySelectorAll('.chart').length));
      const warnings = window.nnergyWarnings || [];
      body.setAttribute('data-warnings', String(warnings.length));
      if (warnings.length) body.setAttribute('data-warning-text', warnings.slice(0, 5).join(' | '));
      body.setAttribute('data-nnergy-status', errors.length ? 'error' : 'ok');
      setFirstPaint();
      // The height the page needs, for a full-page screenshot.
      body.setAttribute('data-page-height', String(document.documentElement.scrollHeight));
    });
  }

  // The entry point of each kind's script.
  NN.render = function (build) {
    document.body.setAttribute('data-script-start-ms', performance.now().toFixed(1));
    try {
      const data = NN.data();
      header(data);
      requestAnimationFrame(() => {
        firstFrameMs = performance.now();
        if (document.body.hasAttribute('data-rendered-ms')) setFirstPaint();
      });
      if (window.PerformanceObserver) {
        try {
          new PerformanceObserver(() => {
            if (document.body.hasAttribute('data-rendered-ms')) setFirstPaint();
          }).observe({type: 'paint', buffered: true});
        } catch (e) { /* paint timing not supported: the animation frame stands in */ }
      }
      if (typeof vegaEmbed !== 'function') throw new Error('the chart library vega-embed did not load');
      build(data);
    } catch (e) {
      NN.error(e && e.stack ? e.stack : String(e));
    }
    finish();
  };
})();
