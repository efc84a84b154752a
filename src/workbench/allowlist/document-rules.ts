/**
 * Argument rules for the document tools a runner image may provide (LibreOffice,
 * ImageMagick; Poppler's programs run no others): the cheap cases where an argument
 * makes them run a command. ImageMagick reads a file name that starts with `|` (or a
 * coder prefix and `|`, `png:|...`) as a pipe from a command it starts, and `@file`
 * as a list of such names; LibreOffice runs a macro named by a `macro:` or
 * `vnd.sun.star.script:` URL. Values only known at run time are left to the sandbox,
 * as for every program whose file arguments are not options.
 *
 * @module
 */

import { type ProgramRule, textOf, unsafe } from './rule-support.js';

/**
 * `|cmd`, `fmt:|cmd` and `@list`: ImageMagick runs the command, or reads names that
 * may. (`label:@file` reads text, not names: left alone.)
 */
const MAGICK_PIPE = /^(([A-Za-z0-9]+:)?\||@)/;

/** ImageMagick (`convert`, `identify`, `mogrify`, ...): no pipe or list file names. */
export const magickRule: ProgramRule = (args, program) => {
  for (const word of args) {
    const text = textOf(word);
    if (text !== null && MAGICK_PIPE.test(text)) {
      return unsafe(
        program,
        word,
        `"${text.slice(0, 20)}": a file name starting with "|" runs a command and one starting with "@" reads a list of names; give the image file itself.`,
      );
    }
  }
  return null;
};

const OFFICE_MACRO = /^(macro:|vnd\.sun\.star\.script:)/i;

/** LibreOffice (`soffice`, `libreoffice`): no macro URLs. */
export const officeRule: ProgramRule = (args, program) => {
  for (const word of args) {
    const text = textOf(word);
    if (text !== null && OFFICE_MACRO.test(text)) {
      return unsafe(
        program,
        word,
        'a macro URL runs a macro, which can run commands; convert documents with --headless --convert-to instead.',
      );
    }
  }
  return null;
};

/** The rules, by program name. */
export const DOCUMENT_RULES: Readonly<Record<string, ProgramRule>> = {
  convert: magickRule,
  identify: magickRule,
  mogrify: magickRule,
  montage: magickRule,
  composite: magickRule,
  compare: magickRule,
  magick: magickRule,
  soffice: officeRule,
  libreoffice: officeRule,
};
