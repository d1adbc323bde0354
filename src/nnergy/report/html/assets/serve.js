/* nnergy serve --html: a language model served on GPUs: the totals per token and per request,
 * energy by phase and part, the batch and clock sweeps, the operations of one decode step.
 * Reads: context, model, deployment, workload, totals, phases, parts, memory, operations,
 * batch_sweep, clock_sweep, energy_optimal_clock_mhz, method, notes. ASCII only (see common.js). */
NN.render(function (data) {
  'use strict';
  const finite = NN.finite;
  const model = data.model || {};
  const dep = data.deployment || {};
  const work = data.workload || {};
  const t = data.totals || {};

  function summarySection() {
    const s = NN.section('summary', model.id || 'model',
      (dep.gpus || 1) + ' ' + NN.TIMES + ' ' + (dep.device_name || dep.device || '') + ', tp ' + dep.tp +
      (dep.pp > 1 ? ', pp ' + dep.pp : '') + (dep.ep > 1 ? ', ep ' + dep.ep : '') +
      ', ' + dep.precision + ' weights (' + dep.math + ' math' + (dep.weight_only ? ', weight-only' : '') +
      '), KV cache ' + dep.kv_precision + ', ' + dep.engine + ' (' + dep.engine_release + '); ' +
      work.kind + ': ' + work.input_tokens + ' prompt + ' + work.output_tokens + ' output tokens per request, batch ' +
      NN.sig(t.batch) + '. All figures predicted.');
    NN.cards(s, [
      {label: 'energy per output token', value: NN.qty(t.energy_per_output_token_j, 'J'),
       sub: NN.qty(t.energy_per_request_j, 'J') + ' per request'},
      {label: 'output tokens per second', value: NN.sig(t.output_tokens_per_s),
       sub: NN.sig(t.output_tokens_per_s_per_gpu) + ' per GPU'},
      {label: 'time per output token', value: NN.qty(t.time_per_output_token_s, 's'),
       sub: 'TTFT ' + NN.qty(t.ttft_s, 's') + ' (no queueing)'},
      {label: 'average power', value: NN.qty(t.avg_power_w, 'W'),
       sub: NN.qty(t.avg_power_per_gpu_w, 'W') + ' per GPU, ' + dep.power_scope + ' scope'},
    ]);
  }

  function partsSection() {
    const s = NN.section('parts', 'Energy per request by part',
      'Prefill ' + NN.qty((data.phases || {}).prefill.energy_per_request_j, 'J') + ', decode ' +
      NN.qty((data.phases || {}).decode.energy_per_request_j, 'J') +
      '; by part of the model (attention, MLP or experts, communication, the GPUs waiting for the host).');
    const parts = Object.entries(data.parts || {}).map(([part, v]) => ({part: part, energy: v.energy_j}))
      .filter((p) => finite(p.energy) && p.energy > 0);
    if (!parts.length) {
      s.append(NN.el('p', {class: 'note'}, 'No energy by part in the document.'));
      return;
    }
    NN.chart(s, 'parts', {
      data: {values: parts}, width: NN.plotWidth(200), height: 24 * parts.length + 20,
      mark: {type: 'bar'},
      encoding: {y: {field: 'part', type: 'nominal', sort: '-x', title: null},
                 x: {field: 'energy', type: 'quantitative', title: 'energy per request (J)'},
                 tooltip: [{field: 'part'}, {field: 'energy', title: 'J', format: '.4~g'}]},
    }, 'Energy of one request, all GPUs of its replica.');
  }

  function sweepSection(key, id, title, xField, xTitle) {
    const points = (data[key] || []).filter((p) => p.fits);
    if (points.length < 2) return;
    const s = NN.section(id, title, key === 'clock_sweep' && finite(data.energy_optimal_clock_mhz)
      ? 'Energy-optimal clock: ' + data.energy_optimal_clock_mhz + ' MHz (a GPU reaches it with its clocks locked).'
      : 'Each point a prediction of the same deployment.');
    const panel = (field, label) => ({
      width: NN.plotWidth(200, 2) - 40, height: 240, data: {values: points},
      mark: {type: 'line', point: true},
      encoding: {x: {field: xField, type: 'quantitative', title: xTitle,
                     scale: xField === 'batch' && NN.spans(points.map((p) => p.batch), 10) ? {type: 'log', base: 2} : {zero: false}},
                 y: {field: field, type: 'quantitative', title: label, scale: {zero: false}},
                 tooltip: [{field: xField}, {field: field, format: '.4~g'}]},
    });
    NN.chart(s, id, {hconcat: [panel('energy_per_output_token_j', 'J per output token'),
                               panel('output_tokens_per_s', 'output tokens per second')],
                     resolve: {scale: {y: 'independent'}}}, title + ' of the deployment.');
  }

  function operationsSection() {
    const ops = data.operations || [];
    if (!ops.length) return;
    const s = NN.section('operations', 'One decode step',
      'Each operation once on one GPU (count: occurrences per step), as nnergy serve --layers lists them.');
    NN.table(s, [
      {label: 'operation', value: (o) => o.name},
      {label: 'part', value: (o) => o.part},
      {label: 'count', value: (o) => o.count, num: true},
      {label: 'time', value: (o) => o.time_s, format: (v) => NN.qty(v, 's'), num: true},
      {label: 'energy', value: (o) => o.energy_j, format: (v) => NN.qty(v, 'J'), num: true},
      {label: 'power', value: (o) => o.power_w, format: (v) => NN.qty(v, 'W'), num: true},
    ], ops, {sortable: true});
  }

  function notesSection() {
    const s = NN.section('notes', 'How these figures were obtained');
    NN.list(s, [data.method || ''].concat(data.notes || []).filter(Boolean));
  }

  summarySection();
  partsSection();
  sweepSection('batch_sweep', 'batch-sweep', 'Batch sweep', 'batch', 'running sequences');
  sweepSection('clock_sweep', 'clock-sweep', 'Clock sweep', 'clock_mhz', 'core clock (MHz)');
  operationsSection();
  notesSection();
});
