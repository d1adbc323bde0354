/* nnergy archline plot --html: the plot nnergy drew (an SVG, inserted as it is) and the fitted
 * archline parameters with their confidence intervals. No Vega chart here; the status protocol
 * still applies (the inserted SVG must draw something).
 * Reads: context, fits {precision: fit}, charts [{title, svg}]. ASCII only (see common.js). */
NN.render(function (data) {
  'use strict';
  const finite = NN.finite;
  const context = data.context || {};
  const fits = data.fits || {};

  function chartsSection() {
    const device = context.input_device_name || context.input_catalog_device || '';
    const s = NN.section('charts', 'Roofline, archline and powerline',
      'Measured benchmark points' + (device ? ' of ' + device : '') +
      (context.input ? ' (' + context.input + ')' : '') + ' with the fitted model, as nnergy archline plot draws them.');
    const charts = data.charts || [];
    if (!charts.length) s.append(NN.el('p', {class: 'note'}, 'The document holds no chart.'));
    charts.forEach((chart, i) => {
      // The SVG is nnergy's own output (archline::render_archline_svg), trusted markup.
      NN.svgChart(s, 'archline-svg-' + (i + 1), chart.svg || '', chart.title);
    });
  }

  // A fitted parameter's name and unit from its key.
  const PARAMETERS = [
    ['eps_flop_pj', NN.el('span', {}, '\u03b5_flop'), 'pJ/FLOP'],
    ['eps_mem_pj_per_byte', NN.el('span', {}, '\u03b5_mem'), 'pJ/B'],
    ['pi0_w', NN.el('span', {}, '\u03c00 (constant power)'), 'W'],
    ['intercept_j', NN.el('span', {}, 'intercept c'), 'J'],
  ];
  const MODELS = [['parameters', 'Eq. 5 (the fit the model uses)'], ['with_intercept', 'Eq. 5 with an intercept'],
                  ['per_flop', 'Eq. 6, per FLOP'], ['per_byte', 'Eq. 7, per byte']];
  const number = (v) => (finite(v) ? NN.sig(v) : NN.DASH);

  function fitsSection() {
    const s = NN.section('fits', 'Fitted parameters',
      'Holtmann 2024: E = W' + NN.DOT + '\u03b5_flop + Q' + NN.DOT + '\u03b5_mem + T' + NN.DOT + '\u03c00 (W: FLOPs, ' +
      'Q: bytes moved, T: time), fitted by least squares on the admitted points; each parameter with its ' +
      'standard error and confidence interval.');
    const precisions = Object.keys(fits);
    if (!precisions.length) s.append(NN.el('p', {class: 'note'}, 'The document holds no fit.'));
    for (const precision of precisions) {
      const fit = fits[precision];
      const level = finite(fit.confidence) ? NN.sig(100 * fit.confidence).replace(/\.0+$/, '') + ' %' : 'confidence';
      s.append(NN.el('h3', {}, precision + ': ' + fit.points_admitted + ' of ' + fit.points_total + ' points admitted (' +
        fit.points_origin + ')'));
      const rows = [];
      for (const [key, label] of MODELS) {
        const model = fit[key];
        if (!model) continue;
        for (const [name, parameterLabel, unit] of PARAMETERS) {
          const p = model[name];
          if (!p) continue;
          rows.push({model: label, equation: model.equation || '', parameter: parameterLabel.textContent, unit: unit,
                     value: p.value, se: p.standard_error, low: p.ci_low, high: p.ci_high,
                     r2: model.r_squared, points: model.points, condition: model.condition_number});
        }
      }
      NN.table(s, [
        {label: 'fit', value: (r) => r.model, title: (r) => r.equation},
        {label: 'parameter', value: (r) => r.parameter},
        {label: 'value', value: (r) => r.value, format: (v, r) => number(v) + ' ' + r.unit, num: true},
        {label: 'standard error', value: (r) => r.se, format: (v, r) => number(v) + ' ' + r.unit, num: true},
        {label: level + ' interval', value: (r) => r.low,
         format: (v, r) => number(r.low) + ' ' + NN.DASH + ' ' + number(r.high) + ' ' + r.unit, num: true},
        {label: 'R\u00b2', value: (r) => r.r2, format: (v) => (finite(v) ? v.toFixed(4) : NN.DASH), num: true},
        {label: 'points', value: (r) => r.points, num: true},
        {label: 'condition', value: (r) => r.condition, format: number, num: true,
         help: 'condition number of the fit (large: the parameters are poorly separated)'},
      ], rows);
      if (fit.derived) derivedTable(s, fit);
      const notes = [];
      const named = {eps_flop_pj: ['\u03b5_flop', 'pJ/FLOP'], eps_mem_pj_per_byte: ['\u03b5_mem', 'pJ/B'],
                     pi0_w: ['\u03c00', 'W'], r_squared: ['R\u00b2', '']};
      for (const b of fit.reference_benchmarks || []) {
        const parts = Object.entries(b).filter(([k]) => k !== 'benchmark' && k !== 'points')
          .map(([k, v]) => (named[k] ? named[k][0] + ' ' + number(v) + (named[k][1] ? ' ' + named[k][1] : '')
                                     : k + ' ' + number(v)));
        notes.push('reference benchmark ' + b.benchmark + ' (' + b.points + ' points): ' + parts.join(', '));
      }
      if (fit.peaks_from) notes.push('peaks from ' + fit.peaks_from);
      if (finite(fit.r_squared_all_points)) notes.push('R\u00b2 over all points, not admitted ones included: ' + fit.r_squared_all_points.toFixed(4));
      if (notes.length) NN.list(s, notes);
      if ((fit.warnings || []).length) NN.list(s, fit.warnings, 'warnings');
    }
  }

  // The figures derived from the fit: unit from the key's suffix.
  function derivedTable(parent, fit) {
    const UNITS = [['_pj_per_byte', 'pJ/B'], ['_pj_per_word', 'pJ/word'], ['_pj', 'pJ/FLOP'],
                   ['_flop_per_s', 'FLOP/s'], ['_byte_per_s', 'B/s'], ['_flop_per_byte', 'FLOP/B'],
                   ['_percent', '%'], ['_w', 'W']];
    const rows = Object.entries(fit.derived).map(([key, value]) => {
      const match = UNITS.find(([suffix]) => key.endsWith(suffix));
      const name = (match ? key.slice(0, -match[0].length) : key).replace(/_/g, ' ');
      const unit = match ? match[1] : '';
      const big = unit === 'FLOP/s' || unit === 'B/s';
      return {name: name, text: big ? NN.qty(value, unit) : number(value) + (unit ? ' ' + unit : '')};
    });
    parent.append(NN.el('p', {class: 'note'}, 'Derived from the Eq. 5 fit and the device\'s peaks:'));
    // Two figures per table row, to keep the list short.
    const half = Math.ceil(rows.length / 2);
    const paired = rows.slice(0, half).map((r, i) => [r, rows[half + i] || {name: '', text: ''}]);
    NN.table(parent, [
      {label: 'figure', value: (p) => p[0].name}, {label: 'value', value: (p) => p[0].text, num: true},
      {label: 'figure', value: (p) => p[1].name}, {label: 'value', value: (p) => p[1].text, num: true},
    ], paired);
  }

  chartsSection();
  fitsSection();
});
