import t from 'tap';
import { outputText } from '../../src/store/command-answer.js';

t.test('output is text when it is UTF-8, else base64', async (t) => {
  t.same(outputText(Buffer.from('héllo\n'), false), { text: 'héllo\n' });
  t.same(outputText(Buffer.alloc(0), false), { text: '' });
  const binary = Buffer.from([0x00, 0xff, 0x41]);
  t.same(outputText(binary, false), { text: binary.toString('base64'), encoding: 'base64' });
  // Output cut at its limit inside a character: the partial character goes, the rest is text.
  const euro = Buffer.from('ab€');
  t.same(outputText(euro.subarray(0, 4), true), { text: 'ab' });
  t.same(outputText(euro.subarray(0, 3), true), { text: 'ab' });
  t.same(
    outputText(euro.subarray(0, 4), false),
    { text: euro.subarray(0, 4).toString('base64'), encoding: 'base64' },
    'uncut output ending mid-character is not text',
  );
  const early = Buffer.concat([Buffer.from([0xff]), Buffer.from('abc')]);
  t.same(
    outputText(early, true),
    { text: early.toString('base64'), encoding: 'base64' },
    'a bad byte before the cut is binary',
  );
});
