import t from 'tap';
import { RunHolders } from '../../src/agent/run-holders.js';

t.test('remembers the replica that served each run, the most recent runs first', (t) => {
  const holders = new RunHolders(2);
  holders.served('r1', 'wb-a');
  holders.served('r2', 'wb-b');
  t.equal(holders.get('r1'), 'wb-a');
  holders.served('r1', 'wb-c');
  t.equal(holders.get('r1'), 'wb-c', 'a later call replaces the replica');
  holders.served('r3', 'wb-a');
  t.equal(holders.size, 2, 'bounded');
  t.equal(holders.get('r2'), undefined, 'the run used longest ago goes first');
  t.equal(holders.get('r1'), 'wb-c');
  holders.forget('r1');
  t.equal(holders.get('r1'), undefined, 'forgotten');
  t.throws(() => new RunHolders(0), RangeError);
  t.end();
});
