/* nnergy compare --html: one network on several devices, ranked; energy against time with the
 * Pareto front; the batch sweep. Reads: context, network/mode/precision/batches (top level or in
 * context), devices, rows, notes. ASCII only (see common.js). */
NN.render(function (data) {
  'use strict';
  const finite = NN.finite;
  const context = data.context || {};
  const devices = data.devices || [];
  const rows = data.rows || [];
  const deviceById = new Map(devices.map((d) => [d.id, d]));
  const network = typeof data.network === 'string' ? data.network
    : ((data.network || context.network || {}).name || 'the network');
  const batches = (data.batches || context.batches || Array.from(new Set(rows.map((r) => r.batch))))
    .slice().sort((a, b) => a - b);
  const mode = data.mode || context.mode || '';
  const precision = data.precision || context.precision || '';

  // What a row is called in charts and tables.
  const deviceLabel = (id) => {
    const d = deviceById.get(id);
    return d && d.name ? d.name + ' (' + id + ')' : id;
  };
  const deviceIds = devices.map((d) => d.id).filter((id) => rows.some((r) => r.device === id));
  const deviceColor = {
    field: 'device', type: 'nominal', title: 'device',
    scale: {domain: deviceIds.map(deviceLabel), scheme: deviceIds.length <= 10 ? 'tableau10' : 'tableau20'},
  };
  const clockShape = {field: 'clock', type: 'nominal', title: 'clock',
                      scale: {domain: ['boost', 'energy-optimal'], range: ['circle', 'triangle-up']}};
  // Where a device's model comes from, in a word (calibrated, transferred, estimated, measured):
  // the document's own word, else the first word of its provenance sentence.
  const modelTag = (id, key, sentenceKey) => {
    const d = deviceById.get(id) || {};
    return d[key] || (d[sentenceKey] || '').split(/[ (:]/)[0] || NN.DASH;
  };

  // The values of one row as the charts and tooltips use them.
  const points = rows.map((r) => {
    const b = r.batch || 1;
    const timeStd = finite(r.time_std_s) ? r.time_std_s / b : null;
    const energyStd = finite(r.energy_per_sample_std_j) ? r.energy_per_sample_std_j
      : (finite(r.energy_std_j) ? r.energy_std_j / b : null);
    return {
      device: deviceLabel(r.device), id: r.device, name: (deviceById.get(r.device) || {}).name || r.device, batch: r.batch, clock: r.clock,
      time: r.time_per_sample_s, energy: r.energy_per_sample_j, fits: !!r.fits_memory, pareto: !!r.pareto,
      timeText: NN.qtyStd(r.time_per_sample_s, timeStd, 's'),
      energyText: NN.qtyStd(r.energy_per_sample_j, energyStd, 'J'),
      powerText: NN.qty(r.power_w, 'W'), edpText: NN.qty(r.edp_j_s, 'J' + NN.DOT + 's'),
      clockText: (r.clock === 'energy-optimal' ? 'energy-opt.' : r.clock) +
        (finite(r.clock_mhz) ? ' ' + r.clock_mhz + ' MHz' : ''),
      memoryText: NN.bytes(r.memory_peak_bytes) +
        (!r.fits_memory ? ' (does not fit)' : r.may_not_fit ? ' (may not fit)' : ''),
      flags: [r.pareto ? 'Pareto front' : '', r.host_bound ? 'host-bound' : '',
              r.fits_memory ? '' : 'does not fit in memory',
              r.may_not_fit ? 'may not fit in memory' : ''].filter(Boolean).join(', ') || NN.DASH,
    };
  });
  const pointTooltip = [{field: 'device'}, {field: 'batch'}, {field: 'clockText', title: 'clock'},
                        {field: 'timeText', title: 'time per sample'}, {field: 'energyText', title: 'energy per sample'},
                        {field: 'powerText', title: 'power'}, {field: 'edpText', title: 'EDP (per iteration)'},
                        {field: 'memoryText', title: 'memory peak'}, {field: 'flags', title: 'notes'}];

  // An axis for positive values: logarithmic with SI labels when they span more than 10x, else
  // linear in a prefixed unit. Returns [encoding, field to plot, whether log].
  function axisFor(values, field, label, unit) {
    if (NN.spans(values, 10)) {
      return {field: field, type: 'quantitative', title: label + ' (' + unit + ')',
              scale: {type: 'log'}, axis: {format: '~s'}};
    }
    const u = NN.axisUnit(values, unit);
    return {field: field, type: 'quantitative', title: label + ' (' + u.unit + ')',
            scale: {zero: false}, _scale: u.scale};
  }
  // Divides a field of every value by the axis's scale (linear axes only).
  function scaled(values, encoding) {
    const factor = encoding._scale || 1;
    delete encoding._scale;
    if (factor === 1) return values;
    return values.map((v) => Object.assign({}, v, {[encoding.field]: v[encoding.field] / factor}));
  }

  // The flags of a row as small labels.
  function tags(row) {
    const span = NN.el('span', {});
    if (row.pareto) span.append(NN.el('span', {class: 'tag', title: 'on the time/energy Pareto front of the batch'}, 'Pareto'));
    if (row.host_bound) span.append(NN.el('span', {class: 'tag', title: 'the CPU issues kernels more slowly than the GPU runs them'}, 'host-bound'));
    if (!row.fits_memory) span.append(NN.el('span', {class: 'tag warn', title: 'the estimated peak memory exceeds the device\'s beyond the estimate\'s uncertainty'}, 'does not fit'));
    if (row.may_not_fit) span.append(NN.el('span', {class: 'tag warn', title: 'the estimated peak memory exceeds the device\'s, within the estimate\'s uncertainty'}, 'may not fit'));
    return span;
  }

  // The rows as points: colour = device, shape = clock; filled when the batch fits in memory,
  // hollow (outline only) when it does not. The outline uses the same scale as the fill (Vega-Lite
  // then draws one legend for both).
  function pointLayer(x, y, size) {
    return {
      mark: {type: 'point', filled: true, size: size, strokeWidth: 1.8},
      encoding: {
        x: x, y: y, color: deviceColor, shape: clockShape, tooltip: pointTooltip,
        stroke: deviceColor,
        fillOpacity: {condition: {test: 'datum.fits', value: 0.9}, value: 0},
      },
    };
  }

  // Ranking: one table per batch, by energy per sample; rows that do not fit last.
  function rankingSection() {
    const s = NN.section('ranking', 'Ranking',
      network + ', ' + [mode, precision].filter(Boolean).join(', ') + ', on ' + devices.length + ' devices. ' +
      'Every figure is predicted, not measured; ' + NN.PM + ' is 1' + NN.SIGMA + '. Sorted by energy per sample; ' +
      'click a column to sort by it. Energy-optimal: the device\'s own energy-optimal clock. ' +
      'Pareto: no other row of the batch is both faster and more frugal. Host-bound: the CPU issues kernels ' +
      'more slowly than the GPU runs them.');
    const columns = [
      {label: 'device', value: (r) => r.name, cls: 'name narrow', title: (r) => r.device},
      {label: 'clock', value: (r) => r.clockText, cls: 'nowrap'},
      {label: 'time / sample', value: (r) => r.time, format: (v, r) => r.timeText, num: true},
      {label: 'energy / sample', value: (r) => r.energy, format: (v, r) => r.energyText, num: true},
      {label: 'EDP / iteration', value: (r) => r.row.edp_j_s, format: (v, r) => r.edpText, num: true},
      {label: 'power', value: (r) => r.row.power_w, format: (v, r) => r.powerText, num: true},
      {label: 'memory peak', value: (r) => r.row.memory_peak_bytes, format: (v) => NN.bytes(v), num: true},
      {label: 'notes', value: (r) => r.flags, format: (v, r) => tags(r.row)},
      {label: 'models',
       value: (r) => modelTag(r.id, 'time_model', 'provenance') + ' / ' + modelTag(r.id, 'power_model', 'power_provenance'),
       title: (r) => {
         const d = deviceById.get(r.id) || {};
         return 'time: ' + (d.provenance || NN.DASH) + '\npower: ' + (d.power_provenance || NN.DASH);
       },
       help: 'where the device\'s time and power models come from; hover a cell for the full provenance'},
    ];
    batches.forEach((batch, i) => {
      const list = points.map((p, k) => Object.assign({row: rows[k]}, p)).filter((p) => p.batch === batch)
        .sort((a, b) => (b.fits - a.fits) || (a.energy - b.energy));
      // With several batches each table folds away; the first one is open.
      let parent = s;
      if (batches.length > 1) {
        parent = NN.el('details', {open: i === 0 ? '' : null},
                       NN.el('summary', {}, 'batch ' + batch + ' (' + list.length + ' rows)'));
        s.append(parent);
      }
      NN.table(parent, columns, list, {sortable: true, rowClass: (r) => (r.fits ? null : 'dim')});
    });
    // Where each device's time and power models come from, each sentence once.
    for (const [key, what] of [['provenance', 'time'], ['power_provenance', 'power']]) {
      const bySentence = new Map();
      for (const d of devices) {
        if (!d[key]) continue;
        bySentence.set(d[key], (bySentence.get(d[key]) || []).concat([d.id]));
      }
      if (!bySentence.size) continue;
      s.append(NN.el('p', {class: 'note'}, 'Where each device\'s ' + what + ' model comes from:'));
      NN.list(s, Array.from(bySentence, ([sentence, ids]) => ids.join(', ') + ': ' + sentence));
    }
  }

  // The devices on each batch's Pareto front get a label (colours repeat when there are many
  // devices): one per device, at its faster row, and none that would sit on top of another one
  // (judged on the batch's own extent of the axes, as the panel draws it).
  function labelFront(values, xLog, yLog) {
    const out = values.map((p) => Object.assign({label: ''}, p));
    for (const batch of batches) {
      const rowsOfBatch = out.filter((p) => p.batch === batch);
      const position = (key, log) => {
        const f = (v) => (log ? Math.log10(v) : v);
        const all = rowsOfBatch.map((p) => f(p[key]));
        const lo = Math.min(...all);
        const span = Math.max(...all) - lo || 1;
        return (p) => (f(p[key]) - lo) / span;
      };
      const u = position('time', xLog);
      const v = position('energy', yLog);
      const kept = [];
      for (const p of rowsOfBatch.filter((r) => r.pareto).sort((a, b) => a.time - b.time)) {
        if (kept.some((k) => k.id === p.id || (Math.abs(u(k) - u(p)) < 0.15 && Math.abs(v(k) - v(p)) < 0.06))) continue;
        p.label = p.id;
        kept.push(p);
      }
    }
    return out;
  }

  // Energy per sample against time per sample with the Pareto front: one panel per batch.
  function paretoSection() {
    const s = NN.section('pareto', 'Energy against time',
      'Energy per sample against time per sample; lower left is better. Colour: device; shape: clock; ' +
      'hollow: does not fit in the device\'s memory (estimate). The dashed line is the Pareto front of the ' +
      'batch: it steps through the rows that no other row beats on both time and energy (labelled).');
    const x = axisFor(points.map((p) => p.time), 'time', 'time per sample', 's');
    const y = axisFor(points.map((p) => p.energy), 'energy', 'energy per sample', 'J');
    const values = labelFront(scaled(scaled(points, x), y), x.scale && x.scale.type === 'log',
                              y.scale && y.scale.type === 'log');
    const layer = [
      {transform: [{filter: 'datum.pareto'}],
       mark: {type: 'line', interpolate: 'step-after', color: '#888', strokeDash: [4, 3]},
       encoding: {x: x, y: y}},
      pointLayer(x, y, 110),
      // The devices on the front by name (colours repeat when there are many devices).
      {transform: [{filter: 'datum.label'}],
       mark: {type: 'text', align: 'left', dx: 8, dy: -6, fontSize: 10, color: '#333'},
       encoding: {x: x, y: y, text: {field: 'label'}}},
    ];
    const several = batches.length > 1;
    // Two panels side by side share one legend (about 300 px) and have an axis each (80 px).
    const width = several ? Math.floor((NN.plotWidth(0) - 300 - 2 * 80 - 20) / 2) : NN.plotWidth(340);
    const spec = several
      ? {data: {values: values}, columns: 2,
         facet: {field: 'batch', type: 'ordinal', title: null, header: {labelExpr: '"batch " + datum.value', labelFontSize: 12}},
         spec: {width: width, height: 260, layer: layer},
         resolve: {scale: {x: 'independent', y: 'independent'}}}
      : {data: {values: values}, width: width, height: 300, layer: layer};
    NN.chart(s, 'pareto', spec, several ? 'One panel per batch, each with its own axes.' : 'Batch ' + batches[0] + '.');
  }

  // Time and energy per sample against the batch, per device and clock.
  function batchSection() {
    const s = NN.section('batches', 'Batch sweep',
      'Time and energy per sample against the batch size, per device (colour) and clock (dashes); ' +
      'hollow points: the batch does not fit in the device\'s memory (estimate).');
    const values = points.slice().sort((a, b) => a.batch - b.batch);
    const xLog = NN.spans(batches, 10);
    const x = {field: 'batch', type: 'quantitative', title: 'batch (samples per iteration)',
               scale: xLog ? {type: 'log', base: 2} : {zero: false}, axis: {values: batches, format: 'd'}};
    const panel = (field, label, unit) => {
      const y = axisFor(values.map((p) => p[field]), field, label, unit);
      const plotted = scaled(values, y);
      return {
        width: NN.plotWidth(280, 2) - 40, height: 260, data: {values: plotted},
        layer: [
          {mark: {type: 'line', strokeWidth: 1.5},
           encoding: {x: x, y: y, color: deviceColor, detail: {field: 'clock'},
                      strokeDash: {field: 'clock', type: 'nominal', title: 'clock',
                                   scale: {domain: ['boost', 'energy-optimal'], range: [[1, 0], [5, 3]]}}}},
          pointLayer(x, y, 50),
        ],
      };
    };
    NN.chart(s, 'batch-sweep', {
      hconcat: [panel('time', 'time per sample', 's'), panel('energy', 'energy per sample', 'J')],
      resolve: {scale: {y: 'independent'}},
    }, 'Per sample, per device and clock; a batch that does not fit is drawn hollow and is not ranked. ' +
       'Hover a point for its figures.');
  }

  function notesSection() {
    const s = NN.section('notes', 'Notes');
    const notes = data.notes || [];
    if (notes.length) NN.list(s, notes);
    else s.append(NN.el('p', {class: 'note'}, 'No notes.'));
  }

  rankingSection();
  paretoSection();
  if (batches.length > 1) batchSection();
  notesSection();
});
