import t from 'tap';
import {
  canMove,
  defineStateMachine,
  StateMachine,
  type StateMachineOptions,
} from '../../src/telemetry/state-machine.js';
import { captureLog } from '../queue/queue-support.js';

/** A small lifecycle with a cycle, a fork and a final state. */
type Lamp = 'off' | 'warming' | 'on' | 'broken';
const LAMP = defineStateMachine<Lamp>('lamp', 'off', {
  off: ['warming', 'broken'],
  warming: ['on', 'off', 'broken'],
  on: ['off', 'broken'],
  broken: [],
});
const STATES: readonly Lamp[] = ['off', 'warming', 'on', 'broken'];

/** The moves the lamp allows, written out apart from its definition; no others are. */
const ALLOWED = new Set(
  'off>warming off>broken warming>on warming>off warming>broken on>off on>broken'.split(' '),
);

/** Every ordered pair of states, repeated moves included, and whether it moves. */
const cases = STATES.flatMap((from) =>
  STATES.map((to) => ({ from, to, moves: ALLOWED.has(`${from}>${to}`) })),
);

/** A lamp machine that starts in `from`, with its log lines and moves seen. */
function lampIn(from: Lamp, options: Omit<StateMachineOptions<Lamp>, 'onMove'> = {}) {
  const captured = captureLog();
  const seen: [Lamp, Lamp][] = [];
  const machine = new StateMachine({ ...LAMP, initial: from }, captured.log, {
    ...options,
    onMove: (a, b) => seen.push([a, b]),
  });
  return { machine, seen, lines: captured.lines };
}

t.test('an allowed move moves and logs one debug line; any other changes nothing', async (t) => {
  t.equal(cases.filter((c) => c.moves).length, ALLOWED.size, 'every allowed move is a case');
  for (const { from, to, moves } of cases) {
    const name = `${from} -> ${to}`;
    const { machine, seen, lines } = lampIn(from);
    t.equal(canMove(LAMP.moves, from, to), moves, `${name}: canMove`);
    t.equal(machine.moveTo(to), moves, `${name}: moveTo says whether it moved`);
    t.equal(machine.state, moves ? to : from, `${name}: the state after`);
    t.same(seen, moves ? [[from, to]] : [], `${name}: onMove once per move`);
    t.same(
      lines().map((l) => [l.level, l.machine, l.from, l.to]),
      moves ? [[20, 'lamp', from, to]] : [],
      `${name}: one debug line per move, none for a refusal`,
    );
  }
});

t.test('a move line carries the caller fields, which cannot rename the move', async (t) => {
  const { machine, lines } = lampIn('off', { level: 'info' });
  machine.moveTo('warming', { attempt: 3, from: 'elsewhere', machine: 'other' });
  t.match(lines(), [{ level: 30, machine: 'lamp', from: 'off', to: 'warming', attempt: 3 }]);
});

t.test('a machine starts in its declared initial state and follows a path', async (t) => {
  const captured = captureLog();
  const machine = new StateMachine(LAMP, captured.log);
  t.equal(machine.state, 'off');
  const path: [Lamp, boolean][] = [
    ['warming', true],
    ['warming', false],
    ['on', true],
    ['broken', true],
    ['off', false],
  ];
  t.same(
    path.map(([to]) => machine.moveTo(to)),
    path.map(([, moved]) => moved),
  );
  t.equal(machine.state, 'broken');
  t.same(
    captured.lines().map((l) => `${l.from} -> ${l.to}`),
    ['off -> warming', 'warming -> on', 'on -> broken'],
    'one line per move, none for the refused ones',
  );
});
