/* nnergy evaluate --html: two documents.
 * --published: predicted against measured time, power and energy of published runs, and the
 * errors per GPU, source, precision and mode. Reads: context, calibration, records (measured_s,
 * predicted_s, and where given network, device, precision, mode, batch, source, predictor,
 * measured_power_w, predicted_power_w, measured_energy_j, predicted_energy_j), by_<grouping> and
 * power/energy {by_<grouping>, records (measured_w/predicted_w, measured_j/predicted_j)}.
 * --db: learned predictors scored on measured operators (predictors and points instead of
 * records), drawn by learnedReport at the end of this file. ASCII only (see common.js). */
NN.render(function (data) {
  'use strict';
  if (Array.isArray(data.predictors) && data.points) {
    learnedReport(data);
    return;
  }
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

/* nnergy evaluate --db DATASET --predictor A,B,... --html: learned predictors scored on the
 * measured operators of a dataset. Reads: context (predictors, folds, holdout_networks), dataset
 * {path, digest_fnv1a_64, device, rows, ops, test_ops, holdout_ops, folds, test_fraction},
 * predictors [{name, description, notes, targets [{target ("time_s", "power_w"), rows,
 * modes [{mode, cv_r_squared_mean, cv_r_squared_std, test, holdout}] (test, holdout: null or
 * {count, mape_percent, r_squared, rmse, rmspe_percent, within_10_percent}), networks [{network,
 * mode, measured_time_s, measured_ops_time_s, predicted_time_s, predicted_std_s}]}]}] and points
 * {columns, rows} (one out-of-sample prediction per row: measured and predicted in s or W). */
function learnedReport(data) {
  'use strict';
  const finite = NN.finite;
  const context = data.context || {};
  const dataset = data.dataset || {};
  const predictors = data.predictors || [];
  const names = predictors.map((p) => p.name);
  // [target, section id, label, unit, axis label]
  const TARGETS = [['time_s', 'time', 'time', 's', 'time per operator'],
                   ['power_w', 'power', 'power', 'W', 'average power']];
  const SPLITS = [['cv', 'cv (out-of-fold)', '#6f9bd1'], ['test', 'test (held-out operators)', '#e8710a'],
                  ['holdout', 'holdout (held-out networks)', '#b0279b']];
  const splitLabel = Object.fromEntries(SPLITS.map((s) => [s[0], s[1]]));
  const holdoutNetworks = context.holdout_networks || [];
  const predictorColour = {field: 'predictor', type: 'nominal', title: 'predictor',
                           scale: {domain: names, scheme: 'tableau10'}};
  const R2 = 'R\u00b2';
  const MEAN_R2 = 'R\u0304\u00b2';
  const mapeText = (v) => (finite(v) ? NN.sig(v) + ' %' : NN.DASH);
  const r2Text = (v) => (finite(v) ? v.toFixed(3) : NN.DASH);
  // MAPE (%) and the share within +-10 % of a list of points (null for none).
  const scores = (list) => {
    const errors = list.map((p) => Math.abs(p.predicted - p.measured) / p.measured);
    return errors.length ? {mape: 100 * errors.reduce((a, b) => a + b, 0) / errors.length,
                            within: errors.filter((e) => e <= 0.1).length / errors.length} : null;
  };

  // The points as objects; those a log axis cannot show (a value <= 0) are counted apart.
  const columns = (data.points && data.points.columns) || [];
  const at = Object.fromEntries(columns.map((c, i) => [c, i]));
  const unitOf = Object.fromEntries(TARGETS.map((t) => [t[0], t[3]]));
  const points = [];
  let unplottable = 0;
  for (const row of (data.points && data.points.rows) || []) {
    const p = {};
    for (const c of columns) p[c] = row[at[c]];
    if (!finite(p.measured) || !finite(p.predicted) || p.measured <= 0 || p.predicted <= 0) {
      unplottable += 1;
      continue;
    }
    const unit = unitOf[p.target] || '';
    p.splitLabel = splitLabel[p.split] || String(p.split);
    p.measuredText = NN.qty(p.measured, unit);
    p.predictedText = NN.qtyStd(p.predicted, p.predicted_std, unit);
    p.ratio = NN.sig(p.predicted / p.measured);
    p.foldText = p.split === 'cv' && finite(p.fold) && p.fold >= 0 ? String(p.fold) : NN.DASH;
    points.push(p);
  }
  const splitOrder = (s) => {
    const i = SPLITS.findIndex((x) => x[0] === s);
    return i < 0 ? SPLITS.length : i;
  };
  const targetOf = (predictor, target) => (predictor.targets || []).find((t) => t.target === target);
  const anyHoldout = predictors.some((p) => (p.targets || []).some((t) => (t.modes || []).some((m) => m.holdout)));

  function summarySection() {
    const folds = dataset.folds || context.folds;
    const s = NN.section('summary', 'Summary',
      predictors.length + ' predictor' + (predictors.length === 1 ? '' : 's') + ' (' + names.join(', ') +
      ') scored on the measured operators of ' + (dataset.device || 'the dataset\'s device') + ': ' +
      (folds ? folds + '-fold cross-validation over the training operators, ' : '') +
      'a test split of operators that no fit sees' +
      (holdoutNetworks.length ? ', and the operators of held-out networks (' + holdoutNetworks.join(', ') + ')'
                              : '') +
      '.');
    const trainOps = finite(dataset.ops) && finite(dataset.test_ops) ? dataset.ops - dataset.test_ops : null;
    const cards = [
      {label: 'device', value: dataset.device || context.device || NN.DASH},
      {label: 'measured rows', value: String(dataset.rows ?? NN.DASH),
       sub: (dataset.ops ?? NN.DASH) + ' unique operators'},
      {label: 'test split', value: (dataset.test_ops ?? NN.DASH) + ' ops',
       sub: finite(dataset.test_fraction) ? NN.pct(dataset.test_fraction) + ' of the operators' : null},
      {label: 'cross-validation', value: (folds ?? NN.DASH) + ' folds',
       sub: trainOps !== null ? 'over the other ' + trainOps + ' operators' : null},
      {label: 'held-out networks', value: holdoutNetworks.length ? (dataset.holdout_ops ?? NN.DASH) + ' ops' : 'none',
       sub: holdoutNetworks.length ? holdoutNetworks.join(', ') : 'no --holdout-networks'},
    ];
    NN.cards(s, cards);
    const where = NN.el('p', {class: 'note'}, 'dataset: ', NN.el('code', {}, dataset.path || NN.DASH));
    if (dataset.digest_fnv1a_64) where.append(' (FNV-1a 64 ', NN.el('code', {}, dataset.digest_fnv1a_64), ')');
    if (finite(context.seed)) where.append('; seed ' + context.seed);
    s.append(where);

    for (const predictor of predictors) {
      s.append(NN.el('h3', {}, predictor.name));
      if (predictor.description) s.append(NN.el('p', {class: 'note'}, predictor.description));
      if ((predictor.notes || []).length) NN.list(s, predictor.notes, 'warnings');
      const rows = [];
      for (const target of predictor.targets || []) {
        const label = (TARGETS.find((t) => t[0] === target.target) || [])[2] || target.target;
        for (const m of target.modes || []) rows.push({target: label, rows: target.rows, m: m});
      }
      if (!rows.length) {
        s.append(NN.el('p', {class: 'note'}, 'No target was scored.'));
        continue;
      }
      const test = (r) => r.m.test || {};
      const holdout = (r) => r.m.holdout || {};
      const columnsOfTable = [
        {label: 'target', value: (r) => r.target},
        {label: 'mode', value: (r) => r.m.mode},
        {label: 'test rows', num: true, value: (r) => test(r).count ?? null},
        {label: 'test MAPE', num: true, value: (r) => test(r).mape_percent ?? null, format: mapeText,
         help: 'mean |predicted ' + NN.DASH + ' measured| / measured over the test rows'},
        {label: 'within ' + NN.PM + '10 %', num: true, value: (r) => test(r).within_10_percent ?? null,
         format: (v) => NN.pct(v), help: 'share of the test rows predicted within 10 % of the measurement'},
        {label: 'test ' + R2, num: true, value: (r) => test(r).r_squared ?? null, format: r2Text,
         help: '1 ' + NN.DASH + ' SS_res / SS_tot over the test rows'},
        {label: 'CV ' + MEAN_R2 + ' ' + NN.PM + ' ' + NN.SIGMA, num: true,
         value: (r) => r.m.cv_r_squared_mean ?? null,
         format: (v, r) => (finite(v) ? v.toFixed(3) + (finite(r.m.cv_r_squared_std)
                            ? ' ' + NN.PM + ' ' + r.m.cv_r_squared_std.toFixed(3) : '') : NN.DASH),
         help: 'mean and standard deviation of ' + R2 + ' over the cross-validation folds'},
      ];
      if (anyHoldout) {
        columnsOfTable.push(
          {label: 'holdout rows', num: true, value: (r) => holdout(r).count ?? null},
          {label: 'holdout MAPE', num: true, value: (r) => holdout(r).mape_percent ?? null, format: mapeText,
           help: 'MAPE over the operators of the held-out networks'},
          {label: 'holdout within ' + NN.PM + '10 %', num: true, value: (r) => holdout(r).within_10_percent ?? null,
           format: (v) => NN.pct(v)});
      }
      NN.table(s, columnsOfTable, rows);
    }
    s.append(NN.el('p', {class: 'note'},
      'Every figure is out-of-sample. Test: the ' + (dataset.test_ops ?? '') + ' operators of the test split (' +
      (finite(dataset.test_fraction) ? NN.pct(dataset.test_fraction) : 'a share') + ' of the operators, drawn at ' +
      'random) are held out: no fit ever sees any of their rows (both modes, every dtype and clock); a row is one ' +
      'measurement of an operator. MAPE: mean absolute percentage error, |predicted ' + NN.DASH + ' measured| / ' +
      'measured averaged over the rows; within ' + NN.PM + '10 %: the share of rows predicted within 10 % of the ' +
      'measurement; ' + R2 + ': 1 ' + NN.DASH + ' SS_res / SS_tot of the predictions (in s or W; below 0: worse ' +
      'than predicting the mean). CV ' + MEAN_R2 + ' ' + NN.PM + ' ' + NN.SIGMA + ': the mean and standard ' +
      'deviation of ' + R2 + ' over the ' + (dataset.folds || context.folds || 'k') + ' folds of cross-validation ' +
      'on the other operators, each fold scored by a model fitted without its operators.' +
      (anyHoldout ? ' Holdout: a model fitted without any operator of the held-out networks (' +
                    holdoutNetworks.join(', ') + '), scored on those operators.' : '') +
      (names.includes('analytical') ? ' The analytical predictor is not fitted: its predictions do not depend on ' +
                                      'the split.' : '')));
    if (unplottable) {
      NN.list(s, [unplottable + ' points with a measured or predicted value that is not positive are not ' +
                  'plotted (log axes)'], 'warnings');
    }
  }

  // Predicted against measured of one target: a log-log panel per predictor, coloured by split,
  // with y = x and the +-10 % band.
  function scatterSection(target, id, label, unit, axisLabel) {
    const values = points.filter((p) => p.target === target);
    const s = NN.section(id, 'Predicted against measured ' + axisLabel);
    if (!values.length) {
      const notes = Array.from(new Set([].concat(...predictors.map((p) => p.notes || []))));
      s.append(NN.el('p', {class: 'note'}, 'No predictor has out-of-sample ' + label + ' predictions' +
        (notes.length ? ': ' + notes.join('; ') : '.')));
      return;
    }
    const shown = names.filter((n) => values.some((p) => p.predictor === n));
    const extent = values.map((p) => p.measured).concat(values.map((p) => p.predicted));
    const lo = Math.min(...extent) / 1.3;
    const hi = Math.max(...extent) * 1.3;
    const band = [lo, hi].map((v) => ({x: v, y: v, low: 0.9 * v, high: 1.1 * v}));
    const axis = (title) => ({type: 'quantitative', title: title + ' (' + unit + ')',
                              scale: {type: 'log', domain: [lo, hi], nice: false},
                              axis: {format: '~s', labelOverlap: 'greedy', labelSeparation: 6}});
    const x = Object.assign({field: 'x'}, axis('measured ' + axisLabel));
    const y = Object.assign({field: 'y'}, axis('predicted ' + axisLabel));
    const splits = SPLITS.filter((sp) => values.some((p) => p.split === sp[0]));
    for (const other of new Set(values.map((p) => p.split))) {
      if (!SPLITS.some((sp) => sp[0] === other)) splits.push([other, String(other), '#999999']);
    }
    const modes = Array.from(new Set(values.map((p) => p.mode)));
    // Up to three panels a row; each square, the y axis (about 60 px) beside it.
    const perRow = Math.min(shown.length, 3);
    const side = Math.max(220, Math.min(460, Math.floor((NN.plotWidth(0) - (perRow - 1) * 20) / perRow) - 70));
    const panels = shown.map((name) => {
      const own = values.filter((p) => p.predictor === name)
        .sort((a, b) => splitOrder(a.split) - splitOrder(b.split));
      const test = own.filter((p) => p.split === 'test');
      const t = scores(test);
      return {
        width: side, height: side,
        title: {text: name, subtitle: t ? 'test: MAPE ' + mapeText(t.mape) + ', within ' + NN.PM + '10 %: ' +
                                          NN.pct(t.within) + ' (' + test.length + ' rows)'
                                        : own.length + ' points'},
        layer: [
          {data: {values: band}, mark: {type: 'area', color: '#2a9d4b', opacity: 0.15, clip: true},
           encoding: {x: x, y: Object.assign({}, y, {field: 'low'}), y2: {field: 'high'}}},
          {data: {values: band}, mark: {type: 'line', color: '#2a9d4b', strokeWidth: 1, clip: true},
           encoding: {x: x, y: y}},
          {data: {values: own}, mark: {type: 'point', filled: true, size: 18, opacity: 0.55},
           encoding: {
             x: Object.assign({}, x, {field: 'measured'}), y: Object.assign({}, y, {field: 'predicted'}),
             color: {field: 'splitLabel', type: 'nominal', title: 'split',
                     scale: {domain: splits.map((sp) => sp[1]), range: splits.map((sp) => sp[2])}},
             shape: {field: 'mode', type: 'nominal', title: 'mode', scale: {domain: modes}},
             tooltip: [{field: 'op_type', title: 'op type'}, {field: 'mode'}, {field: 'dtype'},
                       {field: 'splitLabel', title: 'split'}, {field: 'foldText', title: 'fold'},
                       {field: 'measuredText', title: 'measured'}, {field: 'predictedText', title: 'predicted'},
                       {field: 'ratio', title: 'predicted / measured'}, {field: 'predictor'}],
           }},
        ],
      };
    });
    NN.chart(s, 'scatter-' + id, {
      concat: panels, columns: perRow, spacing: 20,
      resolve: {scale: {color: 'shared', shape: 'shared'}},
      config: {legend: {orient: 'top', direction: 'horizontal', titleOrient: 'left'}},
    }, values.length + ' out-of-sample predictions of ' + label + ' (' + unit + ') of single operators. ' +
       'Colour: the split; shape: the mode. cv: out-of-fold predictions, each by the model of the fold that left ' +
       'the operator out; test: operators of the test split, never seen in training' +
       (splits.some((sp) => sp[0] === 'holdout') ? '; holdout: operators of the held-out networks, by a model ' +
        'fitted without them' : '') + '. Green line: predicted = measured; band: within ' + NN.PM + '10 %. ' +
       'Hover a point for its operator.');
  }

  // MAPE per op type, per predictor and target: the test rows of that op type, or its out-of-fold
  // (cv) rows when the test split has none of it.
  function opTypesSection() {
    const s = NN.section('op-types', 'Error per operator type',
      'MAPE of each predictor per operator type, on the test split where it holds that operator type, else on ' +
      'the out-of-fold (cv) predictions (lighter bars): the splits hold disjoint operators, so some types occur ' +
      'in only one of them.');
    const targets = TARGETS.filter((t) => points.some((p) => p.target === t[0]));
    if (!targets.length) {
      s.append(NN.el('p', {class: 'note'}, 'The document has no points.'));
      return;
    }
    const rows = [];
    const count = new Map();
    for (const p of points) count.set(p.op_type, (count.get(p.op_type) || 0) + 1);
    const opTypes = Array.from(count.keys()).sort((a, b) => count.get(b) - count.get(a) || a.localeCompare(b));
    for (const [target, , label, unit] of targets) {
      for (const name of names) {
        for (const op of opTypes) {
          const own = points.filter((p) => p.target === target && p.predictor === name && p.op_type === op);
          const test = own.filter((p) => p.split === 'test');
          const used = test.length ? test : own.filter((p) => p.split === 'cv');
          if (!used.length) continue;
          const {mape, within} = scores(used);
          rows.push({target: label + ' (' + unit + ')', targetKey: target, predictor: name, op_type: op,
                     split: test.length ? 'test' : 'cv', mape: mape, count: used.length,
                     mapeText: mapeText(mape), withinText: NN.pct(within)});
        }
      }
    }
    const splitsUsed = ['test', 'cv'].filter((sp) => rows.some((r) => r.split === sp));
    const tooltip = [{field: 'op_type', title: 'op type'}, {field: 'predictor'}, {field: 'target'},
                     {field: 'split', title: 'split scored'}, {field: 'count', title: 'rows'},
                     {field: 'mapeText', title: 'MAPE'}, {field: 'withinText', title: 'within ' + NN.PM + '10 %'}];
    const perPanel = Math.floor((NN.plotWidth(0) - 170 - (targets.length - 1) * 20) / targets.length) - 10;
    const panels = targets.map(([target, , label, unit], i) => ({
      data: {values: rows.filter((r) => r.targetKey === target)},
      width: Math.min(520, perPanel), height: {step: names.length > 3 ? 6 : 8},
      title: (TARGETS.find((t) => t[0] === target) || [])[4] || label,
      mark: {type: 'bar'},
      encoding: {
        y: {field: 'op_type', type: 'nominal', sort: opTypes, title: i === 0 ? 'operator type' : null,
            axis: i === 0 ? {labelLimit: 150, minExtent: 150} : {labels: false, ticks: false, minExtent: 0}},
        yOffset: {field: 'predictor', sort: names},
        x: {field: 'mape', type: 'quantitative', title: label + ' MAPE (%)'},
        color: predictorColour,
        opacity: {field: 'split', type: 'ordinal', sort: splitsUsed, title: 'split scored',
                  scale: {domain: splitsUsed, range: splitsUsed.map((sp) => (sp === 'test' ? 1 : 0.4))}},
        tooltip: tooltip,
      },
    }));
    NN.chart(s, 'op-types', {
      hconcat: panels, spacing: 20,
      resolve: {scale: {y: 'shared', color: 'shared', opacity: 'shared'}},
      config: {legend: {orient: 'top', direction: 'horizontal', titleOrient: 'left'}},
    }, 'One bar per predictor and operator type; solid: the test split, light: the out-of-fold predictions. ' +
       'Operator types in order of how many points they have. Hover a bar for the rows it averages.');
  }

  // Held-out networks: the predicted network time (sum of count x predicted op time, +-1 sigma)
  // against the sum of the measured ops, per network and mode.
  function networksSection() {
    const rows = [];
    for (const predictor of predictors) {
      for (const target of predictor.targets || []) {
        for (const n of target.networks || []) {
          if (!finite(n.predicted_time_s)) continue;
          rows.push({predictor: predictor.name, network: n.network, mode: n.mode,
                     row: n.network + ' ' + NN.DOT + ' ' + n.mode,
                     measuredOps: n.measured_ops_time_s, measured: n.measured_time_s, predicted: n.predicted_time_s,
                     std: finite(n.predicted_std_s) ? n.predicted_std_s : 0});
        }
      }
    }
    if (!rows.length) return;
    const s = NN.section('networks', 'Held-out networks',
      'Each held-out network (' + holdoutNetworks.join(', ') + ') as a sum over its operators: count ' + NN.TIMES +
      ' predicted operator time by a model fitted without any of its operators, against count ' + NN.TIMES +
      ' measured operator time (the same operators in both sums).');
    const keys = Array.from(new Set(rows.map((r) => r.row)));
    const measured = keys.map((key) => {
      const r = rows.find((x) => x.row === key);
      return {row: key, measuredOps: r.measuredOps, measured: r.measured,
              opsText: NN.qty(r.measuredOps, 's'), measuredText: NN.qty(r.measured, 's')};
    });
    for (const r of rows) {
      r.low = Math.max(r.predicted - r.std, r.predicted / 10);
      r.high = r.predicted + r.std;
      r.predictedText = NN.qtyStd(r.predicted, r.std, 's');
      r.ratio = finite(r.measuredOps) && r.measuredOps > 0 ? NN.sig(r.predicted / r.measuredOps) : NN.DASH;
    }
    const extent = [].concat(rows.map((r) => r.low), rows.map((r) => r.high), measured.map((m) => m.measuredOps),
                             measured.map((m) => m.measured)).filter((v) => finite(v) && v > 0);
    const x = {type: 'quantitative', title: 'network time (s)',
               scale: {type: 'log', domain: [Math.min(...extent) / 1.2, Math.max(...extent) * 1.2], nice: false},
               axis: {format: '~s', labelOverlap: 'greedy', labelSeparation: 6}};
    const y = {field: 'row', type: 'nominal', title: 'network ' + NN.DOT + ' mode', sort: keys,
               axis: {labelLimit: 220, minExtent: 120}};
    const tooltip = [{field: 'network'}, {field: 'mode'}, {field: 'predictor'},
                     {field: 'predictedText', title: 'predicted'},
                     {field: 'ratio', title: 'predicted / measured ops'}];
    const hasNetworkTime = measured.some((m) => finite(m.measured));
    const layers = [
      {data: {values: measured}, mark: {type: 'tick', color: '#222', thickness: 2, size: 8 * names.length + 10},
       encoding: {y: y, x: Object.assign({field: 'measuredOps'}, x),
                  tooltip: [{field: 'row', title: 'network ' + NN.DOT + ' mode'},
                            {field: 'opsText', title: 'measured ops sum'},
                            {field: 'measuredText', title: 'measured network'}]}},
      {data: {values: rows}, mark: {type: 'rule', strokeWidth: 1.5},
       encoding: {y: y, yOffset: {field: 'predictor', sort: names}, x: Object.assign({field: 'low'}, x),
                  x2: {field: 'high'}, color: predictorColour, tooltip: tooltip}},
      {data: {values: rows}, mark: {type: 'point', filled: true, size: 50, opacity: 1},
       encoding: {y: y, yOffset: {field: 'predictor', sort: names}, x: Object.assign({field: 'predicted'}, x),
                  color: predictorColour, tooltip: tooltip}},
    ];
    if (hasNetworkTime) {
      layers.splice(1, 0, {data: {values: measured.filter((m) => finite(m.measured))},
        mark: {type: 'point', shape: 'diamond', filled: false, color: '#222', size: 90, strokeWidth: 1.5},
        encoding: {y: y, x: Object.assign({field: 'measured'}, x),
                   tooltip: [{field: 'row', title: 'network ' + NN.DOT + ' mode'},
                             {field: 'measuredText', title: 'measured network'}]}});
    }
    NN.chart(s, 'networks', {
      width: Math.min(720, NN.plotWidth(360)), height: keys.length * (12 * names.length + 16),
      layer: layers,
    }, 'Dots: predicted network time per predictor, with its ' + NN.PM + '1 ' + NN.SIGMA + ' bar (the spread ' +
       'the predictor reports; none for a predictor without one); black tick: the sum of the measured operators' +
       (hasNetworkTime ? '; hollow diamond: the measured network' : '') + '.');
    const columnsOfTable = [
      {label: 'network', value: (m) => m.row.split(' ' + NN.DOT + ' ')[0]},
      {label: 'mode', value: (m) => m.row.split(' ' + NN.DOT + ' ')[1]},
      {label: 'measured ops sum', num: true, value: (m) => m.measuredOps, format: (v) => NN.qty(v, 's')},
    ];
    if (hasNetworkTime) {
      columnsOfTable.push({label: 'measured network', num: true, value: (m) => m.measured,
                           format: (v) => NN.qty(v, 's')});
    }
    for (const name of names) {
      if (!rows.some((r) => r.predictor === name)) continue;
      const of = (m) => rows.find((r) => r.row === m.row && r.predictor === name);
      columnsOfTable.push(
        {label: name + ': predicted', num: true, value: (m) => (of(m) ? of(m).predicted : null),
         format: (v, m) => (of(m) ? of(m).predictedText : NN.DASH)},
        {label: '/ ops sum', num: true, value: (m) => (of(m) ? of(m).ratio : null),
         help: 'predicted / measured sum of the operators'});
    }
    NN.table(s, columnsOfTable, measured);
  }

  summarySection();
  for (const [target, id, label, unit, axisLabel] of TARGETS) scatterSection(target, id, label, unit, axisLabel);
  opTypesSection();
  networksSection();
}
