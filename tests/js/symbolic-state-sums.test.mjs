// Two things real model code does with a length that the tracer handles: a module that replaces
// its own field in forward (a table of positions made again, longer, for a longer sequence, as
// M2M100's and Speech2Text's sinusoidal embeddings do), whose state the tracer's runs at other sizes
// must not leave behind (om.trace puts the module's fields back before each run); and a size that
// is a sum of floor divisions by different divisors (Funnel's relative positions ceil(T / 2) +
// 2 * ceil(T / 4), which is T + (0, 2, 1, 1)[T mod 4]), fitted as a slope plus a table of residues.
// Each is traced once and run in onnxruntime-web and the Session at sizes on every side.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';

memoryHooks();

/** A table of rows (row r: r * 0.25 + channel) kept to `rows` and made again, longer, when a sequence needs more. */
class GrowingTable extends om.nn.Module {
  constructor(rows) {
    super();
    this.makeTable(rows);
  }

  makeTable(rows) {
    const table = om.tidy(() => om.arange(0, rows, { dtype: 'int64' }).float().mul(0.25).unsqueeze(1).add(om.arange(0, 3).float()));
    this.table?.dispose(); // the old table freed as it is replaced
    this.registerBuffer('table', table, { persistent: false });
  }

  forward(x) {
    const T = x.shape[1];
    if (T + 2 > this.table.shape[0]) this.makeTable(T + 4);
    const positions = om.arange(2, T + 2, { dtype: 'int64' }); // rows 2 .. T + 1
    return x.add(this.table.indexSelect(0, positions));
  }
}

describe('a module that replaces a field in forward', () => {
  test('traced below the size where it grows its table: each run starts from the module as given, the graph right on both sides, the module as one eager call leaves it', async () => {
    const model = new GrowingTable(9); // grows from T = 8
    const before = model.table;
    try {
      await withTraced((keep) => {
        const x = om.randn([2, 5, 3], { seed: 1 });
        const tm = om.trace(model, { x: [x, ['batch', 'T', null]] });
        assert.equal(model.table, before, 'the table the module held when the trace began');
        assert.deepEqual(model.table.shape, [9, 3]);
        keep(tm, { x }, [model.forward(x)], 'traced', model);
        const seq = tm.symbols.find((s) => s.name === 'T');
        assert.deepEqual([seq.min, seq.max, seq.narrowedBy], [1, Infinity, null]);
        for (const T of [1, 6, 7, 8, 9, 40]) {
          const y = om.randn([1, T, 3], { seed: T });
          const fresh = new GrowingTable(9); // eager on a model as given, as the graph is
          try {
            keep(tm, { x: y }, [fresh.forward(y)], `T = ${T}`);
          } finally {
            fresh.dispose();
          }
        }
      });
    } finally {
      model.dispose();
    }
    assert.throws(() => before.shape, (e) => e.kind === 'Disposed', 'the table is freed with the module');
  });

  test('a table the model disposes while it replaces it stays usable through the trace and is freed after it, where the recording run replaced it too', async () => {
    const model = new GrowingTable(3); // grows at every size from 2
    const before = model.table;
    try {
      await withTraced((keep) => {
        const x = om.randn([2, 5, 3], { seed: 2 });
        const tm = om.trace(model, { x: [x, ['batch', 'T', null]] });
        assert.notEqual(model.table, before, 'the recording run grew it');
        assert.deepEqual(model.table.shape, [9, 3]);
        assert.throws(() => before.shape, (e) => e.kind === 'Disposed', 'the table replaced is freed after the trace');
        keep(tm, { x }, [model.forward(x)], 'traced', model);
      });
    } finally {
      model.dispose();
    }
  });
});

describe('a size that is a sum of floor divisions by different divisors', () => {
  test('arange(ceil(T / 2) + 2 * ceil(T / 4)) (Funnel\'s relative positions): T + (0, 2, 1, 1)[T mod 4], right at every residue and far above', async () => {
    const f = (x) => {
      const T = x.shape[1];
      const n = Math.ceil(T / 2) + 2 * Math.ceil(T / 4);
      return om.arange(0, n, { dtype: 'int64' }).float().unsqueeze(0).mul(x.sum(1, true));
    };
    const model = new (class extends om.nn.Module { forward(x) { return f(x); } })();
    await withTraced((keep) => {
      const x = om.randn([2, 11], { seed: 3 });
      const tm = om.trace(model, { x: [x, ['batch', 'T']] });
      keep(tm, { x }, [f(x)], 'traced', model);
      for (const T of [1, 2, 3, 4, 5, 12, 13, 14, 99, 1000]) {
        const y = om.randn([1, T], { seed: T });
        keep(tm, { x: y }, [f(y)], `T = ${T}`);
      }
      const seq = tm.symbols.find((s) => s.name === 'T');
      assert.deepEqual([seq.min, seq.max, seq.narrowedBy], [1, Infinity, null]);
    });
  });
});
