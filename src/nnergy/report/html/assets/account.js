/* nnergy account --html: energy conservation per device, the energy decomposition diagram (EDD)
 * as a zoomable icicle, power over time with the events beneath it, hotspots, warnings.
 * Reads: context, devices, edd, stef (or tef), warnings, power_trace, timeline,
 * timeline_events_total. ASCII only (see common.js). */
NN.render(function (data) {
  'use strict';
  const finite = NN.finite;
  const devices = data.devices || [];

  // (1) Conservation: what was measured is attributed to events or idle.
  function conservationSection() {
    const s = NN.section('conservation', 'Energy conservation',
      'Per device: the energy measured over the accounting window equals the energy attributed to the ' +
      'trace\'s events plus the idle energy (measured while no event ran).');
    if (!devices.length) s.append(NN.el('p', {class: 'note'}, 'The document lists no device.'));
    for (const d of devices) {
      const measured = d.measured_energy_j;
      const attributed = d.attributed_energy_j;
      const idle = d.idle_energy_j;
      const residual = measured - attributed - idle;
      s.append(NN.el('h3', {}, d.device + (d.power_sources ? ' (power: ' + d.power_sources.join(', ') + ')' : '')));
      NN.cards(s, [
        {label: 'measured', value: NN.qty(measured, 'J'),
         sub: 'window ' + NN.qty(d.window_end_s - d.window_start_s, 's')},
        {label: 'attributed to events', value: NN.qty(attributed, 'J'),
         sub: NN.pct(attributed / measured) + ' of measured; busy ' + NN.qty(d.busy_time_s, 's')},
        {label: 'idle', value: NN.qty(idle, 'J'),
         sub: NN.pct(idle / measured) + ' of measured; idle ' + NN.qty(d.idle_time_s, 's')},
        {label: 'events', value: String(d.event_count),
         sub: finite(d.unmeasured_busy_time_s) && d.unmeasured_busy_time_s > 0
           ? NN.qty(d.unmeasured_busy_time_s, 's') + ' busy without power samples' : null},
      ]);
      s.append(NN.el('p', {}, 'measured ' + NN.qty(measured, 'J') + ' = attributed ' + NN.qty(attributed, 'J') +
        ' (' + NN.pct(attributed / measured) + ') + idle ' + NN.qty(idle, 'J') + ' (' + NN.pct(idle / measured) + ')' +
        (Math.abs(residual) > 1e-6 * Math.abs(measured) ? '; residual ' + NN.qty(residual, 'J') : '') + '.'));
    }
  }

  // (2) The EDD as an icicle: one row per depth, width = energy. Click a cell to zoom into it,
  // click the top cell or a breadcrumb to zoom out.
  function eddSection() {
    const s = NN.section('edd', 'Energy decomposition',
      'Each cell is a module or operator of the trace; its width is its energy (the cells beneath it split ' +
      'it further). Click a cell to zoom into it; click the top cell or a name in the path to zoom out. ' +
      'Hover for the figures. Colours tell the branches under the cell in focus apart (inside a branch that ' +
      'holds most of the energy, the branches under it).');
    if (!data.edd) {
      s.append(NN.el('p', {class: 'note'}, 'The document has no decomposition (no "edd").'));
      return;
    }
    const nodes = [];
    const rootEnergy = data.edd.energy_j;
    // keys[L]: the colour of the node's ancestor at level L (its rank among its siblings);
    // dominant[L]: whether that ancestor holds most (2/3) of its parent's energy.
    (function walk(node, parent, path, keys, dominant, siblingKey, isDominant) {
      const id = nodes.length;
      const children = (node.children || []).slice().sort((a, b) => b.energy_j - a.energy_j);
      const childEnergy = children.reduce((sum, c) => sum + (c.energy_j || 0), 0);
      const names = path.concat([node.name]);
      const key = keys.concat([siblingKey]);
      const dom = dominant.concat([isDominant]);
      nodes.push({
        id: id, parent: parent, name: node.name, level: names.length - 1, keys: key, dominant: dom,
        // The partition sums a node's own value with its descendants': give each node the energy
        // its children do not account for.
        self: Math.max(0, (node.energy_j || 0) - childEnergy),
        path: names.join(' ' + NN.ARROW + ' '),
        energyText: NN.qty(node.energy_j, 'J'), timeText: NN.qty(node.time_s, 's'),
        shareText: NN.pct(node.energy_j / rootEnergy),
        parentShareText: parent === null ? NN.DASH : NN.pct(node.energy_j / nodes[parent].energy),
        energy: node.energy_j,
        split: finite(node.forward_energy_j) ? 'forward ' + NN.qty(node.forward_energy_j, 'J') + ', backward ' +
          NN.qty(node.backward_energy_j, 'J') : NN.DASH,
      });
      children.forEach((c, i) => walk(c, id, names, key, dom, i % 10,
                                      i === 0 && (c.children || []).length > 0 && c.energy_j >= 2 / 3 * node.energy_j));
    })(data.edd, null, [], [], [], 0, false);
    const depth = Math.max(...nodes.map((n) => n.level)) + 1;
    const width = NN.plotWidth(10);
    const height = Math.min(12, depth) * 40;

    const crumbs = NN.el('div', {class: 'breadcrumb'});
    s.append(crumbs);
    const cellWidth = "scale('x', datum.x1) - scale('x', datum.x0)";
    const spec = {
      width: width, height: height, padding: 2, autosize: 'none',
      signals: [
        // The node in focus: a click on a cell focuses it; on the focused cell, its parent.
        {name: 'focus', value: 0,
         on: [{events: '@cell:click',
               update: 'datum.id === focus ? (datum.parent === null ? focus : datum.parent) : datum.id'}]},
        {name: 'zoom', update: "data('focused')[0]"},
        {name: 'focusLevel', update: 'zoom ? zoom.level : 0'},
      ],
      data: [
        {name: 'tree', values: nodes,
         transform: [{type: 'stratify', key: 'id', parentKey: 'parent'},
                     {type: 'partition', field: 'self', sort: {field: 'value', order: 'descending'},
                      size: [{signal: 'width'}, {signal: 'height * ' + depth + ' / ' + Math.min(12, depth)}]}]},
        {name: 'focused', source: 'tree', transform: [{type: 'filter', expr: 'datum.id === focus'}]},
      ],
      scales: [
        {name: 'x', type: 'linear', zero: false, nice: false, range: 'width',
         domain: {signal: 'zoom ? [zoom.x0, zoom.x1] : [0, width]'}},
        // Rows keep their height; the focused node's row is the top one.
        {name: 'y', type: 'linear', zero: false, nice: false, range: [0, {signal: 'height'}],
         domain: {signal: 'zoom ? [zoom.y0, zoom.y0 + height] : [0, height]'}},
        {name: 'color', type: 'ordinal', domain: {signal: 'sequence(0, 10)'},
         range: {scheme: 'tableau10'}},
      ],
      marks: [
        {type: 'rect', name: 'cell', from: {data: 'tree'}, clip: true,
         encode: {
           enter: {stroke: {value: '#fff'}, strokeWidth: {value: 1}, cursor: {value: 'pointer'},
                   tooltip: {signal: "{title: datum.path, energy: datum.energyText, 'share of the total': " +
                             "datum.shareText, 'share of its parent': datum.parentShareText, time: datum.timeText, " +
                             "split: datum.split}"}},
           update: {
             x: {scale: 'x', field: 'x0'}, x2: {scale: 'x', field: 'x1'},
             y: {scale: 'y', field: 'y0'}, y2: {scale: 'y', field: 'y1'},
             // The branch under the focus decides the hue (the branch under that, inside a branch
             // that holds most of the energy); deeper cells are lighter, and every other sibling a
             // little lighter still, so that neighbours stand apart.
             fill: [{test: 'datum.level <= focusLevel', value: '#c9ced6'},
                    {scale: 'color', signal: 'datum.dominant[focusLevel + 1] && datum.level > focusLevel + 1 ' +
                                             '? datum.keys[focusLevel + 2] : datum.keys[focusLevel + 1]'}],
             fillOpacity: {signal: 'max(0.3, 1 - 0.14 * (datum.level - focusLevel - 1)) - ' +
                                   '(datum.level > focusLevel + 1 && datum.keys[datum.level] % 2 ? 0.15 : 0)'},
           },
         }},
        {type: 'text', from: {data: 'tree'}, interactive: false, clip: true,
         encode: {
           enter: {baseline: {value: 'middle'}, fontSize: {value: 11}, fill: {value: '#1d2330'}},
           update: {
             x: {scale: 'x', field: 'x0', offset: 4},
             y: {signal: "(scale('y', datum.y0) + scale('y', datum.y1)) / 2"},
             text: {signal: "datum.name + '  ' + datum.energyText"},
             limit: {signal: 'max(0, ' + cellWidth + ' - 8)'},
             // A label only where at least a few characters fit.
             opacity: {signal: cellWidth + ' > 36 ? 1 : 0'},
           },
         }},
      ],
    };
    NN.chart(s, 'edd', spec, 'Energy decomposition of the attributed ' + NN.qty(rootEnergy, 'J') + ' (' +
      nodes.length + ' cells, ' + depth + ' levels).', {mode: 'vega'}).then((result) => {
      // The breadcrumb follows the focus: the path from the root, each step a button.
      if (!result) return;
      const view = result.view;
      const draw = () => {
        crumbs.textContent = '';
        const path = [];
        for (let id = view.signal('focus'); id !== null && id !== undefined; id = nodes[id].parent) path.unshift(id);
        path.forEach((id, i) => {
          if (i) crumbs.append(NN.el('span', {class: 'sep'}, NN.ARROW));
          if (i === path.length - 1) {
            crumbs.append(NN.el('span', {class: 'current'}, nodes[id].name + ' (' + nodes[id].energyText + ')'));
          } else {
            const button = NN.el('button', {type: 'button'}, nodes[id].name);
            button.addEventListener('click', () => view.signal('focus', id).runAsync());
            crumbs.append(button);
          }
        });
      };
      view.addSignalListener('focus', draw);
      draw();
    });
  }

  // (3) Power over time, with the trace's events beneath it on the same time axis.
  function powerSection() {
    const s = NN.section('power', 'Power and events over time');
    const traces = data.power_trace || [];
    const events = data.timeline || [];
    if (!traces.length && !events.length) {
      s.append(NN.el('p', {class: 'note'}, 'The document has no power trace or timeline.'));
      return;
    }
    const times = [];
    traces.forEach((t) => times.push(...t.t_s));
    events.forEach((e) => times.push(e.start_s, e.end_s));
    const t = NN.axisUnit([Math.max(...times.map(Math.abs))], 's');
    const domain = [Math.min(...times) / t.scale, Math.max(...times) / t.scale];
    const x = {type: 'quantitative', scale: {domain: domain, nice: false, zero: false}};
    const width = NN.plotWidth(120 + 200);
    const powerRows = [];
    for (const trace of traces) {
      const series = trace.device + (trace.source ? ' (' + trace.source + ')' : '');
      trace.t_s.forEach((time, i) => powerRows.push({series: series, t: time / t.scale, p: trace.power_w[i]}));
    }
    const windows = devices.filter((d) => finite(d.window_start_s) && finite(d.window_end_s))
      .map((d) => ({device: d.device, start: d.window_start_s / t.scale, end: d.window_end_s / t.scale,
                    text: d.device + ': ' + NN.qty(d.window_start_s, 's') + ' to ' + NN.qty(d.window_end_s, 's')}));
    const vconcat = [];
    if (powerRows.length) {
      vconcat.push({
        width: width, height: 180,
        layer: [
          {data: {values: windows}, mark: {type: 'rect', color: '#2f6db5', opacity: 0.08},
           encoding: {x: Object.assign({field: 'start', title: null}, x), x2: {field: 'end'},
                      tooltip: [{field: 'text', title: 'accounting window'}]}},
          {data: {values: powerRows}, mark: {type: 'line', strokeWidth: 1.2, interpolate: 'step-after'},
           encoding: {x: Object.assign({field: 't', title: events.length ? null : 'time (' + t.unit + ')'}, x),
                      y: {field: 'p', type: 'quantitative', title: 'power (W)',
                          scale: {domainMax: 1.1 * Math.max(...powerRows.map((r) => r.p))}},
                      color: {field: 'series', type: 'nominal', title: 'power source'}}},
        ],
      });
    }
    if (events.length) {
      const eUnit = NN.axisUnit(events.map((e) => e.energy_j), 'J');
      // Event energies span decades: a log colour scale over four decades below the largest;
      // smaller energies (and rounding residues of 1e-15 J) take its lowest colour.
      const most = Math.max(...events.map((e) => e.energy_j)) / eUnit.scale;
      const least = most > 0 ? most / 1e4 : 1;
      const lanes = Array.from(new Set(events.map((e) => e.device + ', depth ' + e.depth))).sort();
      const rows = events.map((e) => ({
        lane: e.device + ', depth ' + e.depth, start: e.start_s / t.scale, end: e.end_s / t.scale,
        energy: Math.max(least, e.energy_j / eUnit.scale), name: e.name, energyText: NN.qty(e.energy_j, 'J'),
        durationText: NN.qty(e.end_s - e.start_s, 's'), startText: NN.qty(e.start_s, 's'),
      }));
      vconcat.push({
        width: width, height: {step: 26},
        data: {values: rows},
        mark: {type: 'rect', stroke: '#ffffff', strokeWidth: 0.3},
        encoding: {
          x: Object.assign({field: 'start', title: 'time (' + t.unit + ')'}, x), x2: {field: 'end'},
          y: {field: 'lane', type: 'nominal', title: null, sort: lanes},
          color: {field: 'energy', type: 'quantitative', title: 'event energy (' + eUnit.unit + ')',
                  scale: {type: 'log', scheme: 'oranges'}, legend: {format: '.2~g'}},
          tooltip: [{field: 'name', title: 'event'}, {field: 'startText', title: 'start'},
                    {field: 'durationText', title: 'duration'}, {field: 'energyText', title: 'energy'}],
        },
      });
    }
    const total = data.timeline_events_total;
    NN.chart(s, 'power-timeline', {vconcat: vconcat, spacing: 6, resolve: {scale: {x: 'shared', color: 'independent'}}},
      'Power as sampled' + (traces.some((tr) => tr.t_s.length >= 4000) ? ' (thinned to at most 4000 samples)' : '') +
      '; shaded: the accounting window. Beneath: the events, nested at most two deep (depth 0 outermost), ' +
      'coloured by their attributed energy' +
      (finite(total) && total > events.length ? '; the ' + events.length + ' longest of ' + total + ' events' : '') +
      '. Time on the accounting\'s time base.');
  }

  // (4) Hotspots: the entries with the most energy.
  function hotspotSection() {
    const table = data.stef || data.tef || {};
    const kind = data.stef ? 'summarized' : 'per name';
    const entries = (table.entries || []).slice().sort((a, b) => b.energy_j - a.energy_j);
    const total = entries.reduce((sum, e) => sum + e.energy_j, 0);
    const s = NN.section('hotspots', 'Hotspots',
      'The 25 entries of the energy footprint (' + kind + ') with the most energy, of ' + entries.length + '.');
    const q = (key, unit) => ({value: (e) => e[key], format: (v) => NN.qty(v, unit), num: true});
    NN.table(s, [
      {label: 'name', value: (e) => e.name, cls: 'name', title: (e) => e.name,
       format: (v) => NN.truncate(v, 70)},
      Object.assign({label: 'energy'}, q('energy_j', 'J')),
      {label: 'share', value: (e) => e.energy_j / total, format: (v) => NN.pct(v), num: true},
      Object.assign({label: 'time'}, q('time_s', 's')),
      Object.assign({label: 'power'}, q('power_w', 'W')),
      Object.assign({label: 'forward'}, q('forward_energy_j', 'J')),
      Object.assign({label: 'backward'}, q('backward_energy_j', 'J')),
      Object.assign({label: 'other'}, q('other_energy_j', 'J')),
      {label: 'events', value: (e) => e.event_count, num: true},
    ], entries.slice(0, 25), {sortable: true});
  }

  function warningsSection() {
    const s = NN.section('warnings', 'Warnings');
    const warnings = data.warnings || [];
    if (warnings.length) NN.list(s, warnings, 'warnings');
    else s.append(NN.el('p', {class: 'note'}, 'No warnings.'));
  }

  conservationSection();
  eddSection();
  powerSection();
  hotspotSection();
  warningsSection();
});
