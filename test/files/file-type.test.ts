import t from 'tap';
import { type FileType, fileTypeOf, notARegularFile } from '../../src/files/file-type.js';

type Kind = 'file' | 'dir' | 'link' | 'fifo' | 'socket' | 'char' | 'block' | 'none';

/** Stats that answer true for exactly one kind. */
function statsOf(kind: Kind) {
  return {
    isFile: () => kind === 'file',
    isDirectory: () => kind === 'dir',
    isSymbolicLink: () => kind === 'link',
    isFIFO: () => kind === 'fifo',
    isSocket: () => kind === 'socket',
    isCharacterDevice: () => kind === 'char',
    isBlockDevice: () => kind === 'block',
  };
}

t.test('every kind of entry has a type', async (t) => {
  const cases: [Kind, FileType][] = [
    ['file', 'file'],
    ['dir', 'directory'],
    ['link', 'symlink'],
    ['fifo', 'fifo'],
    ['socket', 'socket'],
    ['char', 'device'],
    ['block', 'device'],
    ['none', 'unknown'],
  ];
  for (const [kind, want] of cases) t.equal(fileTypeOf(statsOf(kind)), want, kind);
});

t.test('the refusal is invalid_path naming the type', async (t) => {
  const fifo = notARegularFile('p', 'fifo');
  t.equal(fifo.code, 'invalid_path');
  t.same(fifo.payload, { path: 'p', fileType: 'fifo' });
  t.match(fifo.message, /FIFO/);
  t.match(fifo.message, /fs_delete/, 'says what to do');
  t.match(notARegularFile('d', 'directory').message, /fs_list/);
  t.same(notARegularFile('s', 'socket').payload, { path: 's', fileType: 'socket' });
});
