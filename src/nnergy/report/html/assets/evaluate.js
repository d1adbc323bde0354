/* nnergy evaluate --published --html: predicted against measured time, power and energy of
 * published runs, and the errors per GPU, source, precision and mode.
 * Reads: context, calibration, records (measured_s, predicted_s, and where given network, device,
 * precision, mode, batch, source, predictor, measured_power_w, predicted_power_w,
 * measured_energy_j, predicted_energy_j), by_<grouping> and power/energy {by_<grouping>,
 * records (measured_w/predicted_w, measured_j/predicted_j)}. ASCII only (see common.js). */
NN.render(function (data) {
  'use strict';
  const finite = NN.finite;
  const context = data.context || {};
  const records = data.records || [];
  const GROUPINGS = [['device', 'GPU'], ['source', 'source'], ['precision', 'precision'], ['mode', 'mode'],
                     ['grade', 'grade']];
  const MAPE_TEXT = 'MAPE: mean absolute percentage error of predicted against measured, |predicted ' + NN.DASH +
    ' measured| / measured averaged over the runs; median ratio: the median of predicted / measured (above 1: ' +
    'the model over-predicts); within ' + NN.PM + '10 %: the share of runs predicted within 10 % of the measurement.';

  // Predicted/measured pairs of one quantity. Power and energy come either with every record
  // (measured_power_w, ...) or in their own lists (power.records with measured_w, ...).
  function pairs(quantity) {
    const fromRecords = {time: ['measured_s', 'predicted_s'], power: ['measured_power_w', 'predicted_power_w'],
                         energy: ['measured_energy_j', 'predicted_energy_j']}[quantity];
    let list = records.filter((r) => finite(r[fromRecords[0]]) && finite(r[fromRecords[1]]))
      .map((r) => [r, r[fromRecords[0]], r[fromRecords[1]]]);
    if (!list.length && quantity !== 'time') {
      const own = {power: ['measured_w', 'predicted_w'], energy: ['measured_j', 'predicted_j']}[quantity];
      list = ((data[quantity] || {}).records || []).filter((r) => finite(r[own[0]]) && finite(r[own[1]]))
        .map((r) => [r, r[own[0]], r[own[1]]]);
    }
    return list.filter(([, m, p]) => m > 0 && p > 0).map(([r, m, p]) => ({
      measured: m, predicted: p, network: r.network || '', device: r.device || '', id: r.id || '',
      batch: r.batch === null || r.batch === undefined ? NN.DASH : r.batch,
      precision: r.precision || 'not given', mode: r.mode || 'not given', source: r.source || '',
      predictor: r.predictor || context.predictor || 'not given', ratio: NN.sig(p / m),
    }));
  }

  const QUANTITIES = [
    ['time', 'time per iteration', 's'],
    ['power', 'average power', 'W'],
    ['energy', 'energy per iteration', 'J'],
  ];
  const points = {};
  for (const [q] of QUANTITIES) points[q] = pairs(q);
  const all = [].concat(...Object.values(points));
  // Colour: the predictor when there are several, else the precision.
  const predictors = new Set(all.map((p) => p.predictor));
  const colourField = predictors.size > 1 ? ['predictor', 'predictor'] : ['precision', 'precision'];

  // The figures of a grouping: data.by_x for time, data.power.by_x, data.energy.by_x.
  const groups = (quantity, grouping) => (quantity === 'time' ? data['by_' + grouping]
                                                              : (data[quantity] || {})['by_' + grouping]) || [];
  const overall = (quantity) => groups(quantity, 'device').find((g) => g.group === 'all');

  function summarySection() {
    const s = NN.section('summary', 'Summary',
      'The model\'s predictions of published measurements' + (context.published ? ' (' + context.published + ')' : '') +
      ': ' + QUANTITIES.map(([q]) => points[q].length + ' runs with ' + q).join(', ') +
      (context.predictor ? '; predictor: ' + context.predictor : '') + '.');
    const cards = [];
    for (const [q, label] of QUANTITIES) {
      const g = overall(q);
      if (!g) continue;
      cards.push({label: label + ': MAPE', value: NN.pct(g.mape), sub: g.count + ' runs'});
      cards.push({label: label + ': median ratio', value: NN.sig(g.median_ratio),
                  sub: 'within ' + NN.PM + '10 %: ' + NN.pct(g.within_10_percent)});
    }
    NN.cards(s, cards);
    s.append(NN.el('p', {class: 'note'}, MAPE_TEXT));
    const calibration = data.calibration;
    if (calibration) {
      const lines = ['calibration: ' + calibration.corpus + (calibration.in_sample
        ? ' (these measurements are part of it: the errors are in-sample)'
        : ' (these measurements are not part of it: the errors are out-of-sample)')];
      for (const d of calibration.transferred_devices || []) {
        lines.push(d.id + ': ' + d.provenance + (d.power_provenance ? '; power: ' + d.power_provenance : ''));
      }
      NN.list(s, lines);
    }
    const skipped = Object.entries(data.skipped || {});
    const failures = data.failures || [];
    if (skipped.length || failures.length || data.rejected) {
      NN.list(s, skipped.map(([why, n]) => n + ' skipped: ' + why)
        .concat(failures.slice(0, 10).map((f) => 'failed: ' + f.id + ': ' + f.reason))
        .concat(data.rejected ? [data.rejected + ' records rejected'] : []), 'warnings');
    }
  }

  // Predicted against measured, log-log, with y = x and the +-10 % band.
  function scatterSection(quantity, label, unit) {
    const values = points[quantity];
    const s = NN.section(quantity, 'Predicted against measured ' + label);
    const g = overall(quantity);
    if (!values.length) {
      s.append(NN.el('p', {class: 'note'}, 'No run has a measured and a predicted ' + label + '.'));
      return;
    }
    const extent = values.map((p) => p.measured).concat(values.map((p) => p.predicted));
    const lo = Math.min(...extent) / 1.3;
    const hi = Math.max(...extent) * 1.3;
    const band = [lo, hi].map((v) => ({x: v, y: v, low: 0.9 * v, high: 1.1 * v}));
    const axis = (title) => ({type: 'quantitative', title: title + ' (' + unit + ')',
                              scale: {type: 'log', domain: [lo, hi], nice: false}, axis: {format: '~s'}});
    const x = Object.assign({field: 'x'}, axis('measured ' + label));
    const y = Object.assign({field: 'y'}, axis('predicted ' + label));
    const side = Math.min(460, NN.plotWidth(300));
    NN.chart(s, 'scatter-' + quantity, {
      width: side, height: side,
      layer: [
        {data: {values: band}, mark: {type: 'area', color: '#2a9d4b', opacity: 0.15, clip: true},
         encoding: {x: x, y: Object.assign({}, y, {field: 'low'}), y2: {field: 'high'}}},
        {data: {values: band}, mark: {type: 'line', color: '#2a9d4b', strokeWidth: 1, clip: true},
         encoding: {x: x, y: y}},
        {data: {values: values}, mark: {type: 'point', filled: true, size: 26, opacity: 0.6},
         encoding: {
           x: Object.assign({}, x, {field: 'measured'}), y: Object.assign({}, y, {field: 'predicted'}),
           color: {field: colourField[0], type: 'nominal', title: colourField[1]},
           shape: {field: 'mode', type: 'nominal', title: 'mode'},
           tooltip: [{field: 'network'}, {field: 'device'}, {field: 'batch'}, {field: 'precision'},
                     {field: 'mode'}, {field: 'predictor'}, {field: 'measured', format: '.3~s', title: 'measured (' + unit + ')'},
                     {field: 'predicted', format: '.3~s', title: 'predicted (' + unit + ')'},
                     {field: 'ratio', title: 'predicted / measured'}, {field: 'id', title: 'record'}],
         }},
      ],
    }, values.length + ' runs. Green line: predicted = measured; band: within ' + NN.PM + '10 %. ' +
       (g ? 'MAPE ' + NN.pct(g.mape) + ', median ratio ' + NN.sig(g.median_ratio) + ', within ' + NN.PM + '10 %: ' +
            NN.pct(g.within_10_percent) + ' (defined in the summary).' : ''));
  }

  // MAPE and median ratio per group, per quantity: bars, and a table with every figure.
  function groupsSection() {
    const s = NN.section('groups', 'Errors per group', MAPE_TEXT);
    const rows = [];
    for (const [grouping, groupingLabel] of GROUPINGS) {
      for (const [q] of QUANTITIES) {
        for (const g of groups(q, grouping)) {
          if (g.group === 'all') continue;
          rows.push({grouping: groupingLabel, group: String(g.group), quantity: q, mape: 100 * g.mape,
                     ratio: g.median_ratio, count: g.count, within: g.within_10_percent,
                     mapeText: NN.pct(g.mape), ratioText: NN.sig(g.median_ratio),
                     withinText: NN.pct(g.within_10_percent)});
        }
      }
    }
    if (!rows.length) {
      s.append(NN.el('p', {class: 'note'}, 'The document has no per-group figures.'));
      return;
    }
    const quantityColor = {field: 'quantity', type: 'nominal', title: 'quantity',
                           scale: {domain: QUANTITIES.map((q) => q[0]), scheme: 'tableau10'}};
    const tooltip = [{field: 'grouping'}, {field: 'group'}, {field: 'quantity'}, {field: 'count', title: 'runs'},
                     {field: 'mapeText', title: 'MAPE'}, {field: 'ratioText', title: 'median ratio'},
                     {field: 'withinText', title: 'within ' + NN.PM + '10 %'}];
    const half = Math.floor((NN.plotWidth(0) - 240 - 120 - 40) / 2);
    const shown = GROUPINGS.map((g) => g[1]).filter((name) => rows.some((r) => r.grouping === name));
    const vconcat = shown.map((name) => {
      const subset = rows.filter((r) => r.grouping === name);
      // A fixed label width keeps the panels of every grouping aligned.
      const y = {field: 'group', type: 'nominal', title: name, axis: {labelLimit: 200, minExtent: 200}};
      const yRight = Object.assign({}, y, {axis: {labels: false, ticks: false, title: null}});
      return {
        data: {values: subset},
        hconcat: [
          {width: half, height: {step: 12},
           mark: {type: 'bar'},
           encoding: {y: y, yOffset: {field: 'quantity', sort: QUANTITIES.map((q) => q[0])},
                      x: {field: 'mape', type: 'quantitative', title: 'MAPE (%)'},
                      color: quantityColor, tooltip: tooltip}},
          {width: half, height: {step: 12},
           layer: [
             {mark: {type: 'bar'},
              encoding: {y: yRight, yOffset: {field: 'quantity', sort: QUANTITIES.map((q) => q[0])},
                         x: {field: 'ratio', type: 'quantitative', title: 'median ratio (predicted / measured)'},
                         color: quantityColor, tooltip: tooltip}},
             {data: {values: [{one: 1}]}, mark: {type: 'rule', color: '#333', strokeDash: [3, 2]},
              encoding: {x: {field: 'one', type: 'quantitative'}}},
           ]},
        ],
      };
    });
    NN.chart(s, 'groups', {vconcat: vconcat, spacing: 16, resolve: {scale: {color: 'shared'}}},
      'Left: MAPE per group; right: median ratio (dashed: 1, no bias). Hover a bar for the run count.');
    // The table: one row per group, the three quantities side by side.
    const byGroup = new Map();
    for (const r of rows) {
      const key = r.grouping + '\u0000' + r.group;
      if (!byGroup.has(key)) byGroup.set(key, {grouping: r.grouping, group: r.group});
      byGroup.get(key)[r.quantity] = r;
    }
    const figure = (q, field, text) => ({
      label: q + ' ' + (field === 'mape' ? 'MAPE' : 'median ratio'), num: true,
      value: (g) => (g[q] ? g[q][field] : null), format: (v, g) => (g[q] ? g[q][text] : NN.DASH)});
    NN.table(s, [
      {label: 'grouping', value: (g) => g.grouping},
      {label: 'group', value: (g) => g.group, cls: 'name', title: (g) => g.group},
      {label: 'runs', value: (g) => Math.max(...QUANTITIES.map(([q]) => (g[q] ? g[q].count : 0))), num: true,
       title: (g) => QUANTITIES.filter(([q]) => g[q]).map(([q]) => q + ': ' + g[q].count).join(', ')},
    ].concat(...QUANTITIES.map(([q]) => [figure(q, 'mape', 'mapeText'), figure(q, 'ratio', 'ratioText')])),
    Array.from(byGroup.values()), {sortable: true});
  }

  summarySection();
  for (const [q, label, unit] of QUANTITIES) scatterSection(q, label, unit);
  groupsSection();
});
