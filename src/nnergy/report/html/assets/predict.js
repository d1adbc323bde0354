/* nnergy predict --html: totals, per-layer bars, roofline, archline, clock sweep, notes.
 * Reads: context, models, totals, memory, layers, notes, roofline (optional), clock_sweep
 * (optional). ASCII only (see common.js). */
NN.render(function (data) {
  'use strict';
  const finite = NN.finite;
  const context = data.context || {};
  const totals = data.totals || {};
  const layers = data.layers || [];
  const TOP = 20;

  // One colour per operator type in every chart; "other" (the grouped bar) in grey.
  const opTypes = Array.from(new Set(layers.map((l) => l.op_type))).sort();
  const palette = vega.scheme(opTypes.length <= 10 ? 'tableau10' : 'tableau20');
  const opColor = {
    field: 'op', type: 'nominal', title: 'operator',
    scale: {domain: opTypes.concat(['other']),
            range: opTypes.map((_, i) => palette[i % palette.length]).concat(['#b0b4bb'])},
  };

  // (1) The totals as cards, with where the figures come from.
  function totalsSection() {
    const s = NN.section('totals', 'Totals');
    const device = context.device || {};
    const network = context.network || {};
    const clock = finite(context.clock_mhz) ? context.clock_mhz + ' MHz' : 'the boost clock';
    s.append(NN.el('p', {}, (network.name || 'the network') + ' on ' + (device.name || device.id || 'the device') +
      (device.id && device.name ? ' (' + device.id + ')' : '') + ': ' + [context.mode, 'batch ' + context.batch,
      context.precision, clock].filter(Boolean).join(', ') + '. Figures are per iteration.'));
    const memory = data.memory || {};
    const batch = context.batch || memory.batch;
    const std = (v, unit) => (finite(v) && v > 0 ? NN.qty(v, unit) : null);
    NN.cards(s, [
      {label: 'time per iteration', value: NN.qty(totals.time_s, 's'), std: std(totals.time_std_s, 's'),
       sub: finite(totals.host_launch_s) && totals.host_launch_s > 0
         ? 'GPU ' + NN.qty(totals.gpu_time_s, 's') + ', host launches ' + NN.qty(totals.host_launch_s, 's') : null},
      {label: 'energy per iteration', value: NN.qty(totals.energy_j, 'J'), std: std(totals.energy_std_j, 'J')},
      {label: 'average power', value: NN.qty(totals.power_w, 'W')},
      {label: 'energy-delay product', value: NN.qty(totals.edp_j_s, 'J' + NN.DOT + 's'),
       std: std(totals.edp_std_j_s, 'J' + NN.DOT + 's')},
      {label: 'energy per sample', value: NN.qty(totals.energy_per_sample_j, 'J'),
       sub: batch ? 'batch ' + batch : null},
      {label: 'device memory peak', value: NN.bytes(totals.memory_peak_bytes || memory.peak_bytes),
       sub: finite(memory.device_fraction) ? NN.pct(memory.device_fraction) + ' of ' +
         NN.bytes(memory.device_memory_bytes) + (memory.exceeds_device_beyond_uncertainty ?
           ' (does not fit)' : memory.exceeds_device ? ' (may not fit: within the estimate\'s uncertainty)' : '') : null},
      {label: 'work', value: NN.qty(totals.flop_count, 'FLOP'),
       sub: NN.qty(totals.byte_count, 'B') + ' moved, ' + NN.qty(totals.parameter_count, '') + ' parameters'},
    ]);
    // Where the figures come from: the models, and the first note (the predictor's provenance).
    const models = data.models || context.models || {};
    const by = Object.entries(models).filter(([, v]) => v)
      .map(([k, v]) => k.replace(/_/g, ' ') + ' model: ' + v).join('; ');
    s.append(NN.el('p', {class: 'provenance'},
      (by ? 'Predicted by: ' + by + (context.predictor_file ? ' (' + context.predictor_file + ')' : '') + '. '
          : 'Predicted, not measured. ') +
      (totals.time_std_s > 0 ? NN.PM + ' is 1' + NN.SIGMA + '. ' : '')));
    if ((data.notes || []).length) {
      s.append(NN.el('p', {class: 'provenance'}, 'Provenance: ' + data.notes[0] + ' (all notes below).'));
    }
  }

  // (2) Per-layer energy and time: the top layers and the rest as one bar.
  function layerSection() {
    const s = NN.section('layers', 'Energy and time per layer',
      'The ' + TOP + ' layers (ONNX nodes) with the most energy and the most time, the rest grouped in one bar. ' +
      'Colour: the operator type; hover a bar for the full name.');
    barChart(s, 'layer-energy', 'energy_j', 'energy', 'J');
    barChart(s, 'layer-time', 'time_s', 'time', 's');
  }

  function barChart(parent, name, key, quantity, unit) {
    const ranked = layers.filter((l) => finite(l[key]) && l[key] > 0).sort((a, b) => b[key] - a[key]);
    if (!ranked.length) {
      parent.append(NN.el('p', {class: 'note'}, 'No layer has a predicted ' + quantity + '.'));
      return;
    }
    const total = ranked.reduce((sum, l) => sum + l[key], 0);
    const top = ranked.slice(0, TOP);
    const rest = ranked.slice(TOP);
    const axis = NN.axisUnit(top.map((l) => l[key]).concat([rest.reduce((a, l) => a + l[key], 0)]), unit);
    const row = (rank, label, op, value, layer) => ({
      rank: rank, label: label, op: op, value: value / axis.scale,
      valueText: NN.qty(value, unit), share: NN.pct(value / total),
      name: layer ? layer.name : label, module: layer ? layer.module_path || '' : '',
      other: layer ? NN.qty(key === 'time_s' ? layer.energy_j : layer.time_s, key === 'time_s' ? 'J' : 's') : '',
      power: layer ? NN.qty(layer.power_w, 'W') : '',
    });
    // The bars' labels must be unique (ONNX node names usually are, but may be empty).
    const seen = new Set();
    const rows = top.map((l, i) => {
      let label = l.name || '(node ' + l.index + ')';
      if (seen.has(label)) label += ' #' + l.index;
      seen.add(label);
      return row(i, label, l.op_type, l[key], l);
    });
    if (rest.length) {
      rows.push(row(TOP, 'other (' + rest.length + ' layers)', 'other',
                    rest.reduce((sum, l) => sum + l[key], 0), null));
    }
    const otherName = key === 'time_s' ? 'energy' : 'time';
    const y = {field: 'label', type: 'nominal', sort: rows.map((r) => r.label),
               axis: {title: null, labelLimit: 300}};
    const x = {field: 'value', type: 'quantitative', title: quantity + ' (' + axis.unit + ')',
               scale: {domainMax: Math.max(...rows.map((r) => r.value)) * 1.12}};
    NN.chart(parent, name, {
      width: NN.plotWidth(300 + 190), height: {step: 17},
      data: {values: rows},
      encoding: {y: y, x: x},
      layer: [
        {mark: {type: 'bar'},
         encoding: {
           color: opColor,
           tooltip: [{field: 'name', title: 'layer'}, {field: 'module', title: 'module'},
                     {field: 'op', title: 'operator'}, {field: 'valueText', title: quantity},
                     {field: 'share', title: 'share of the ' + quantity},
                     {field: 'other', title: otherName}, {field: 'power', title: 'average power'}]}},
        {mark: {type: 'text', align: 'left', dx: 3, fontSize: 10, color: '#444'},
         encoding: {text: {field: 'share'}}},
      ],
    }, 'Layers by ' + quantity + ' per iteration, largest first; the labels give the share of the total ' +
       quantity + ' (' + NN.qty(total, unit) + ').');
  }

  // The layers that can be placed on a roofline: some work, some bytes, some time.
  const placeable = layers.filter((l) => l.flop_count > 0 && l.byte_count > 0 && l.time_s > 0 && l.energy_j > 0);
  const energyUnit = NN.axisUnit(placeable.map((l) => l.energy_j), 'J');
  function placedLayers() {
    return placeable.map((l) => ({
      name: l.name, op: l.op_type, intensity: l.flop_count / l.byte_count, rate: l.flop_count / l.time_s,
      efficiency: l.flop_count / l.energy_j, energySize: l.energy_j / energyUnit.scale, energyText: NN.qty(l.energy_j, 'J'),
      timeText: NN.qty(l.time_s, 's'), bound: l.compute_bound ? 'compute' : 'memory',
      intensityText: NN.sig(l.flop_count / l.byte_count) + ' FLOP/B', rateText: NN.qty(l.flop_count / l.time_s, 'FLOP/s'),
      efficiencyText: NN.qty(l.flop_count / l.energy_j, 'FLOP/J'),
    }));
  }

  // Log-spaced values from lo to hi (n of them), with the extra values `also` inserted.
  function logSpace(lo, hi, n, also) {
    const out = [];
    for (let i = 0; i < n; i += 1) out.push(lo * Math.pow(hi / lo, i / (n - 1)));
    return out.concat((also || []).filter((v) => v > lo && v < hi)).sort((a, b) => a - b);
  }

  function intensityRange(points, extra) {
    const values = points.map((p) => p.intensity).concat(extra.filter((v) => finite(v) && v > 0));
    return [Math.min(...values) / 2, Math.max(...values) * 2];
  }

  const pointTooltip = [{field: 'name', title: 'layer'}, {field: 'op', title: 'operator'},
                        {field: 'intensityText', title: 'intensity'}, {field: 'rateText', title: 'attained'},
                        {field: 'efficiencyText', title: 'efficiency'}, {field: 'energyText', title: 'energy'},
                        {field: 'timeText', title: 'time'}, {field: 'bound', title: 'bound by'}];
  // SI prefixes for rates (200G FLOP/s), plain numbers for intensities (0.1 FLOP/B, not 100m).
  const logAxis = (title, format) => ({type: 'quantitative', scale: {type: 'log'}, title: title,
                                       axis: {format: format || '~s', grid: true}});

  function pointLayer(y) {
    return {
      data: {name: 'layers'},
      mark: {type: 'point', filled: true, opacity: 0.75, stroke: '#333', strokeWidth: 0.4},
      encoding: {
        x: Object.assign({field: 'intensity'}, logAxis('arithmetic intensity (FLOP/B)', '~g')),
        y: Object.assign({field: y.field}, logAxis(y.title)),
        color: opColor,
        size: {field: 'energySize', type: 'quantitative', title: 'layer energy (' + energyUnit.unit + ')',
               scale: {range: [12, 400]}},
        tooltip: pointTooltip,
      },
    };
  }

  // (3) Roofline: attained FLOP/s against intensity, under min(peak, bandwidth x intensity).
  function rooflineSection() {
    const s = NN.section('roofline', 'Roofline');
    const points = placedLayers();
    if (!points.length) {
      s.append(NN.el('p', {class: 'note'}, 'No layer has FLOPs, bytes and a predicted time to place on a roofline.'));
      return;
    }
    const roof = data.roofline || {};
    const roofs = [];
    if (finite(roof.peak_flop_per_s) && finite(roof.bandwidth_bytes_per_s)) {
      roofs.push(['datasheet peaks', roof.peak_flop_per_s, roof.bandwidth_bytes_per_s]);
    }
    if (finite(roof.attainable_flop_per_s) && finite(roof.attainable_bytes_per_s)) {
      roofs.push(['attainable (fitted efficiency)', roof.attainable_flop_per_s, roof.attainable_bytes_per_s]);
    }
    const [lo, hi] = intensityRange(points, roofs.map((r) => r[1] / r[2]));
    const lines = [];
    for (const [kind, peak, bandwidth] of roofs) {
      for (const i of [lo, peak / bandwidth, hi]) lines.push({kind: kind, intensity: i, rate: Math.min(peak, bandwidth * i)});
    }
    const layer = [];
    if (lines.length) {
      layer.push({
        data: {values: lines},
        mark: {type: 'line', color: '#555', strokeWidth: 1.5, clip: true},
        encoding: {
          x: Object.assign({field: 'intensity'}, logAxis('arithmetic intensity (FLOP/B)', '~g')),
          y: Object.assign({field: 'rate'}, logAxis('attained rate (FLOP/s)')),
          strokeDash: {field: 'kind', type: 'nominal', title: 'roof',
                       scale: {domain: roofs.map((r) => r[0]), range: [[1, 0], [6, 3]]}},
        },
      });
    }
    layer.push(pointLayer({field: 'rate', title: 'attained rate (FLOP/s)'}));
    NN.chart(s, 'roofline', {
      width: NN.plotWidth(300), height: 380,
      datasets: {layers: points}, data: {name: 'layers'},
      layer: layer,
    }, 'One point per layer (' + points.length + ' of ' + layers.length + '; layers without FLOPs, bytes or time ' +
       'are left out): x = FLOPs / bytes moved, y = FLOPs / predicted time. Point size: the layer\'s energy. ' +
       (roofs.length ? 'Roofs: min(peak FLOP/s, bandwidth ' + NN.TIMES + ' intensity) at ' +
        (roof.precision || '') + ', ' + roof.clock_mhz + ' MHz' +
        roofs.map((r) => '; ' + r[0] + ': ' + NN.qty(r[1], 'FLOP/s') + ', ' + NN.qty(r[2], 'B/s')).join('') + '.'
        : 'The document gives no roofs (no "roofline" block).'));
  }

  // (4) Archline: energy efficiency (FLOP/J) against intensity.
  function archlineSection() {
    const s = NN.section('archline', 'Archline');
    const points = placedLayers();
    if (!points.length) {
      s.append(NN.el('p', {class: 'note'}, 'No layer has FLOPs, bytes and a predicted energy to place on an archline.'));
      return;
    }
    const roof = data.roofline || {};
    const ef = roof.eps_flop_j;
    const em = roof.eps_mem_j_per_byte;
    const pi0 = roof.pi0_w;
    const peak = finite(roof.attainable_flop_per_s) ? roof.attainable_flop_per_s : roof.peak_flop_per_s;
    const bandwidth = finite(roof.attainable_bytes_per_s) ? roof.attainable_bytes_per_s : roof.bandwidth_bytes_per_s;
    const rates = finite(roof.attainable_flop_per_s) ? 'attainable' : 'datasheet';
    const curves = [];
    const names = [];
    if (finite(ef) && finite(em)) {
      const withPi0 = finite(pi0) && finite(peak) && finite(bandwidth);
      const [lo, hi] = intensityRange(points, [em / ef, withPi0 ? peak / bandwidth : NaN]);
      const without = 'without ' + '\u03c0' + '0 (upper bound)';
      const including = 'with ' + '\u03c0' + '0 ' + NN.TIMES + ' roofline time';
      names.push(without);
      if (withPi0) names.push(including);
      for (const i of logSpace(lo, hi, 80, withPi0 ? [peak / bandwidth] : [])) {
        // Energy per FLOP: eps_flop + eps_mem / I, plus pi0 x time per FLOP on the roofline.
        const perFlop = ef + em / i;
        curves.push({kind: without, intensity: i, efficiency: 1 / perFlop});
        if (withPi0) curves.push({kind: including, intensity: i, efficiency: 1 / (perFlop + pi0 * Math.max(1 / peak, 1 / (bandwidth * i)))});
      }
    }
    const layer = [];
    if (curves.length) {
      layer.push({
        data: {values: curves},
        mark: {type: 'line', color: '#555', strokeWidth: 1.5, clip: true},
        encoding: {
          x: Object.assign({field: 'intensity'}, logAxis('arithmetic intensity (FLOP/B)', '~g')),
          y: Object.assign({field: 'efficiency'}, logAxis('energy efficiency (FLOP/J)')),
          strokeDash: {field: 'kind', type: 'nominal', title: 'archline',
                       scale: {domain: names, range: [[1, 0], [6, 3]]}},
        },
      });
    }
    layer.push(pointLayer({field: 'efficiency', title: 'energy efficiency (FLOP/J)'}));
    NN.chart(s, 'archline', {
      width: NN.plotWidth(300), height: 380,
      datasets: {layers: points}, data: {name: 'layers'},
      layer: layer,
    }, 'One point per layer: y = FLOPs / predicted energy. ' + (curves.length
      ? 'Solid: the archline without the constant power, I / (\u03b5_flop' + NN.DOT + 'I + \u03b5_mem), with \u03b5_flop = ' +
        NN.qty(ef, 'J') + '/FLOP and \u03b5_mem = ' + NN.qty(em, 'J') + '/B; it leaves out \u03c00, so it is an upper bound for layers predicted with these parameters. ' +
        (names.length > 1 ? 'Dashed: the same plus \u03c00 = ' + NN.qty(pi0, 'W') + ' for the roofline time at the ' + rates +
          ' rates (' + NN.qty(peak, 'FLOP/s') + ', ' + NN.qty(bandwidth, 'B/s') + '); the model\'s other terms ' +
          '(operand power while computing, host launches) are not in it, so layers can lie below it. ' : '') +
        (roof.archline_estimated ? 'The archline parameters of this device are estimates, not measured.' : '')
      : 'The document gives no archline parameters (no "roofline" block).'));
  }

  // (5) The clock sweep: time, power, energy and EDP against the SM clock.
  function sweepSection(sweep) {
    const s = NN.section('clock-sweep', 'Clock sweep',
      'The same prediction at every SM clock of the device; bands: ' + NN.PM + '1' + NN.SIGMA + ' where the model gives it.');
    const points = sweep.points.slice().sort((a, b) => a.clock_mhz - b.clock_mhz);
    const panels = [
      ['time_s', 'time_std_s', 'time', 's'],
      ['power_w', 'power_std_w', 'power', 'W'],
      ['energy_j', 'energy_std_j', 'energy', 'J'],
      ['edp_j_s', 'edp_std_j_s', 'EDP', 'J' + NN.DOT + 's'],
    ];
    const rules = [];
    if (finite(sweep.energy_optimal_clock_mhz)) rules.push({kind: 'energy-optimal', clock: sweep.energy_optimal_clock_mhz});
    if (finite(sweep.edp_optimal_clock_mhz)) rules.push({kind: 'EDP-optimal', clock: sweep.edp_optimal_clock_mhz});
    if (finite(context.clock_mhz)) rules.push({kind: 'this prediction', clock: context.clock_mhz});
    rules.forEach((r) => { r.text = r.kind + ': ' + r.clock + ' MHz'; });
    const clocks = points.map((p) => p.clock_mhz).concat(rules.map((r) => r.clock));
    const xDomain = [Math.min(...clocks), Math.max(...clocks)];
    const width = NN.plotWidth(70 + 180);
    const vconcat = panels.map(([key, stdKey, label, unit], index) => {
      const axis = NN.axisUnit(points.map((p) => p[key]), unit);
      const hasStd = points.some((p) => finite(p[stdKey]) && p[stdKey] > 0);
      const values = points.map((p) => ({
        clock: p.clock_mhz, v: p[key] / axis.scale,
        lo: hasStd ? Math.max(0, (p[key] - p[stdKey]) / axis.scale) : null,
        hi: hasStd ? (p[key] + p[stdKey]) / axis.scale : null,
        text: NN.qtyStd(p[key], p[stdKey], unit),
      }));
      const last = index === panels.length - 1;
      const x = {field: 'clock', type: 'quantitative', scale: {domain: xDomain, nice: false},
                 axis: {title: last ? 'SM clock (MHz)' : null, labels: last}};
      const layer = [];
      if (hasStd) {
        layer.push({mark: {type: 'area', opacity: 0.18, color: '#2f6db5'},
                    encoding: {x: x, y: {field: 'lo', type: 'quantitative'}, y2: {field: 'hi'}}});
      }
      layer.push({mark: {type: 'line', color: '#2f6db5', point: {size: 14, color: '#2f6db5'}},
                  encoding: {x: x, y: {field: 'v', type: 'quantitative', title: label + ' (' + axis.unit + ')',
                                       scale: {zero: false}},
                             tooltip: [{field: 'clock', title: 'clock (MHz)'}, {field: 'text', title: label}]}});
      layer.push({data: {values: rules},
                  mark: {type: 'rule', strokeWidth: 1.5},
                  encoding: {x: {field: 'clock', type: 'quantitative'},
                             color: {field: 'kind', type: 'nominal', title: 'clock',
                                     scale: {domain: ['energy-optimal', 'EDP-optimal', 'this prediction'],
                                             range: ['#2a9d4b', '#8e44ad', '#999999']}},
                             strokeDash: {field: 'kind', type: 'nominal', title: 'clock',
                                          scale: {domain: ['energy-optimal', 'EDP-optimal', 'this prediction'],
                                                  range: [[1, 0], [5, 3], [2, 2]]}},
                             tooltip: [{field: 'text', title: 'clock'}]}});
      return {width: width, height: 120, data: {values: values}, layer: layer};
    });
    NN.chart(s, 'clock-sweep', {vconcat: vconcat, spacing: 8, resolve: {scale: {x: 'shared'}}},
      optimumText(sweep));
  }

  function optimumText(sweep) {
    const parts = [];
    const describe = (label, clock, optimum) => {
      if (!finite(clock)) return;
      let text = label + ' at ' + clock + ' MHz';
      if (optimum && optimum.uncertainty_known && optimum.overlaps_runner_up) {
        const n = (optimum.indistinguishable_clocks_mhz || []).length;
        text += ' (not distinguishable within 1' + NN.SIGMA + ' from the runner-up at ' +
          optimum.runner_up_clock_mhz + ' MHz' + (n ? '; ' + n + ' clocks are' : '') + ')';
      }
      parts.push(text);
    };
    describe('Lowest energy', sweep.energy_optimal_clock_mhz, sweep.energy_optimum);
    describe('lowest EDP', sweep.edp_optimal_clock_mhz, sweep.edp_optimum);
    return parts.join('; ') + '. Time, power, energy and EDP are per iteration.';
  }

  // (6) The notes: where the figures come from and what they leave out.
  function notesSection() {
    const notes = data.notes || [];
    const s = NN.section('notes', 'Notes');
    if (notes.length) NN.list(s, notes);
    else s.append(NN.el('p', {class: 'note'}, 'No notes.'));
    if ((data.unknown_ops || []).length) {
      s.append(NN.el('p', {class: 'note'}, 'Operators the model does not know: ' + data.unknown_ops.join(', ') + '.'));
    }
  }

  // The sections, in page order.
  totalsSection();
  layerSection();
  rooflineSection();
  archlineSection();
  if (data.clock_sweep && (data.clock_sweep.points || []).length) sweepSection(data.clock_sweep);
  notesSection();
});
