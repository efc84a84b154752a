import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Whether the client restates the API's shapes instead of re-exporting them from the
 * contract, where they are defined once: {@link restatedShapes} reads the TypeScript
 * sources of a client directory with the compiler's type checker. A type the client
 * declares itself is a restatement when it
 *
 * - has the name of a type the contract exports (unless it is that very type under an
 *   alias);
 * - has exactly the fields of a type the contract exports (a copy under another name);
 * - or is named in what the client reads off an answer (`field<T>(body, ...)`, and
 *   `answer as T` of a JSON answer): an answer is read as contract types, the standard
 *   library's types and primitives only, never as an inline shape.
 *
 * Options of the client's own calls (how it builds a query) stay the client's.
 *
 * @module
 */

/** The repository's `node_modules`, from `dist/test/support/`. */
const modules = resolve(dirname(fileURLToPath(import.meta.url)), '../../../node_modules');

const TYPE_FLAGS = ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias;

function resolveAlias(checker: ts.TypeChecker, symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** Whether a type is made of object types only (not a string union, say). */
function isObjectShape(type: ts.Type): boolean {
  if (type.isUnionOrIntersection()) return type.types.every(isObjectShape);
  return (type.flags & ts.TypeFlags.Object) !== 0;
}

/** A type's field names, sorted and joined; empty for a type that is no object shape. */
function fieldNames(checker: ts.TypeChecker, symbol: ts.Symbol): string {
  const type = checker.getDeclaredTypeOfSymbol(symbol);
  if (!isObjectShape(type)) return '';
  return checker
    .getPropertiesOfType(type)
    .map((p) => p.name)
    .sort()
    .join(',');
}

/** The code between parentheses, `await` and type assertions. */
function stripped(node: ts.Expression): ts.Expression {
  let e = node;
  while (ts.isParenthesizedExpression(e) || ts.isAwaitExpression(e) || ts.isAsExpression(e)) {
    e = e.expression;
  }
  return e;
}

/** Whether `node` is a JSON answer being read: `http.json(...)` or `JSON.parse(...)`. */
function isAnswerCall(node: ts.Expression): boolean {
  const e = stripped(node);
  if (!ts.isCallExpression(e)) return false;
  const callee = e.expression.getText();
  return /(^|\.)http\.json$/.test(callee) || callee === 'JSON.parse';
}

/**
 * The client-declared types a client restates instead of re-exporting them from the
 * contract: one message per finding, naming the file and the type. The client's rooms
 * (its subdirectories, such as the ComputeSDK provider) are read too.
 */
export function restatedShapes(clientDir: string, contractIndex: string): string[] {
  const clientFiles = readdirSync(clientDir, { recursive: true, encoding: 'utf8' })
    .filter((n) => n.endsWith('.ts') && !n.endsWith('.d.ts'))
    .map((n) => join(clientDir, n));
  const program = ts.createProgram([...clientFiles, contractIndex], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [join(modules, '@types')],
  });
  const checker = program.getTypeChecker();
  const contractDir = dirname(resolve(contractIndex)) + sep;
  const inContract = (file: string) => resolve(file).startsWith(contractDir);
  const isLibrary = (sf: ts.SourceFile) =>
    program.isSourceFileDefaultLibrary(sf) || sf.fileName.includes('/node_modules/');

  const contractSource = program.getSourceFile(contractIndex);
  const contractModule = contractSource && checker.getSymbolAtLocation(contractSource);
  if (!contractModule) throw new Error(`no contract module at ${contractIndex}`);
  const contractTypes = new Map<string, ts.Symbol>();
  for (const exported of checker.getExportsOfModule(contractModule)) {
    const target = resolveAlias(checker, exported);
    if (target.flags & TYPE_FLAGS) contractTypes.set(exported.name, target);
  }
  const contractFields = new Map<string, string>();
  for (const [name, symbol] of contractTypes) {
    const fields = fieldNames(checker, symbol);
    // A shape of one field says too little to call another one its copy.
    if (fields.includes(',')) contractFields.set(fields, name);
  }

  const findings: string[] = [];
  for (const file of clientFiles) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!source || !module) continue;
    const where = relative(dirname(clientDir), file);

    for (const exported of checker.getExportsOfModule(module)) {
      // A re-export (of the contract, or of another client file) restates nothing.
      if (exported.flags & ts.SymbolFlags.Alias || !(exported.flags & TYPE_FLAGS)) continue;
      const own = checker.getDeclaredTypeOfSymbol(exported);
      const sameName = contractTypes.get(exported.name);
      if (sameName && checker.getDeclaredTypeOfSymbol(sameName) !== own) {
        findings.push(
          `${where}: ${exported.name} restates the contract's ${exported.name}; re-export it`,
        );
        continue;
      }
      const twin = contractFields.get(fieldNames(checker, exported));
      if (twin && checker.getDeclaredTypeOfSymbol(contractTypes.get(twin)!) !== own) {
        findings.push(
          `${where}: ${exported.name} has exactly the fields of the contract's ${twin}; re-export that`,
        );
      }
    }

    // What the client reads off answers names contract types only.
    const answerNames = new Set<string>();
    const checkRead = (type: ts.TypeNode, at: ts.Node) => {
      const line = source.getLineAndCharacterOfPosition(at.getStart()).line + 1;
      const visit = (node: ts.Node) => {
        if (ts.isTypeLiteralNode(node) || ts.isMappedTypeNode(node)) {
          findings.push(
            `${where}:${line}: reads an answer as an inline shape ${node.getText()}; name a contract type`,
          );
          return;
        }
        if (ts.isTypeReferenceNode(node)) {
          const symbol = checker.getSymbolAtLocation(node.typeName);
          const target = symbol && resolveAlias(checker, symbol);
          const declared = target?.declarations?.[0]?.getSourceFile();
          if (declared && !inContract(declared.fileName) && !isLibrary(declared)) {
            findings.push(
              `${where}:${line}: reads an answer as ${node.typeName.getText()}, declared in ${relative(dirname(clientDir), declared.fileName)}; answers are the contract's types`,
            );
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(type);
    };
    const isAnswer = (node: ts.Expression): boolean => {
      const e = stripped(node);
      if (isAnswerCall(e)) return true;
      if (ts.isIdentifier(e)) return answerNames.has(e.text);
      if (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) {
        return isAnswer(e.expression);
      }
      return false;
    };
    const walk = (node: ts.Node) => {
      if (ts.isVariableDeclaration(node) && node.initializer && ts.isIdentifier(node.name)) {
        if (isAnswerCall(node.initializer)) answerNames.add(node.name.text);
      }
      if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
        if (ts.isIdentifier(node.left) && isAnswerCall(node.right)) answerNames.add(node.left.text);
      }
      if (ts.isAsExpression(node) && isAnswer(node.expression)) checkRead(node.type, node);
      if (
        ts.isCallExpression(node) &&
        ts.isIdentifier(node.expression) &&
        node.expression.text === 'field'
      ) {
        for (const arg of node.typeArguments ?? []) checkRead(arg, node);
      }
      ts.forEachChild(node, walk);
    };
    walk(source);
  }
  return findings;
}
