// Oracle for the JavaScript/TypeScript scanner: the TypeScript compiler's own parser.
// Reads file paths (one per line) on stdin, prints one JSON line per top-level or
// class-level definition: {path, name, line, kind, scope}, with our kind names.
// Usage: node bench/bench_scan_tsc_oracle.js TYPESCRIPT_MODULE_DIR < files.txt
"use strict";
const fs = require("fs");
const ts = require(process.argv[2]);

function kindOfInit(init) {
  if (!init) return null;
  while (ts.isParenthesizedExpression(init) || ts.isAsExpression(init)) init = init.expression;
  if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return "function";
  return null;
}

function emit(out, sf, path, node, name, kind, scope) {
  if (!name || !(ts.isIdentifier(name) || ts.isPrivateIdentifier(name))) return;
  const line = sf.getLineAndCharacterOfPosition(name.getStart(sf)).line + 1;
  out.push(JSON.stringify({ path, name: name.text, line, kind, scope }));
}

function members(out, sf, path, cls, scope) {
  for (const m of cls.members) {
    if (ts.isMethodDeclaration(m) || ts.isGetAccessor(m) || ts.isSetAccessor(m) ||
        ts.isMethodSignature(m)) {
      emit(out, sf, path, m, m.name, "method", scope);
    } else if (ts.isConstructorDeclaration(m)) {
      const kw = m.getFirstToken(sf);
      // the 'constructor' keyword token
      for (const t of m.getChildren(sf)) {
        if (t.kind === ts.SyntaxKind.ConstructorKeyword) {
          const line = sf.getLineAndCharacterOfPosition(t.getStart(sf)).line + 1;
          out.push(JSON.stringify({ path, name: "constructor", line, kind: "method", scope }));
        }
      }
      void kw;
    } else if (ts.isPropertyDeclaration(m) && kindOfInit(m.initializer)) {
      emit(out, sf, path, m, m.name, "method", scope);
    } else if (ts.isClassDeclaration(m)) {
      emit(out, sf, path, m, m.name, "class", scope);
    }
  }
}

function items(out, sf, path, statements, scope) {
  for (const s of statements) {
    if (ts.isFunctionDeclaration(s)) {
      emit(out, sf, path, s, s.name, "function", scope);
    } else if (ts.isClassDeclaration(s)) {
      emit(out, sf, path, s, s.name, "class", scope);
      if (s.name) members(out, sf, path, s, scope ? scope + "." + s.name.text : s.name.text);
    } else if (ts.isInterfaceDeclaration(s)) {
      emit(out, sf, path, s, s.name, "interface", scope);
      members(out, sf, path, s, scope ? scope + "." + s.name.text : s.name.text);
    } else if (ts.isTypeAliasDeclaration(s)) {
      emit(out, sf, path, s, s.name, "type", scope);
    } else if (ts.isEnumDeclaration(s)) {
      emit(out, sf, path, s, s.name, "enum", scope);
    } else if (ts.isVariableStatement(s)) {
      const isConst = (s.declarationList.flags & ts.NodeFlags.Const) !== 0;
      for (const d of s.declarationList.declarations) {
        if (isRequire(d.initializer)) continue; // an import, not a definition
        const k = kindOfInit(d.initializer) || (isConst ? "const" : "variable");
        emit(out, sf, path, d, d.name, k, scope);
      }
    } else if (ts.isModuleDeclaration(s)) {
      let body = s.body;
      let name = ts.isIdentifier(s.name) ? s.name.text : null;
      while (body && ts.isModuleDeclaration(body)) {
        name = name + "." + body.name.text;
        body = body.body;
      }
      if (body && ts.isModuleBlock(body)) {
        const inner = name ? (scope ? scope + "." + name : name) : scope;
        items(out, sf, path, body.statements, inner);
      }
    } else if (ts.isExpressionStatement(s) && ts.isBinaryExpression(s.expression) &&
               s.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const left = s.expression.left;
      let right = s.expression.right;
      // a = b = function () {}: the innermost value
      while (ts.isBinaryExpression(right) &&
             right.operatorToken.kind === ts.SyntaxKind.EqualsToken) right = right.right;
      if (ts.isClassExpression(right) && right.name) {
        emit(out, sf, path, right, right.name, "class", scope);
        members(out, sf, path, right, right.name.text);
      } else if (ts.isPropertyAccessExpression(left) && kindOfInit(right)) {
        // exports.f = function / module.exports.f = () => (functions);
        // X.prototype.m = function, app.m = function (methods scoped to X, app)
        let owner = left.expression.getText(sf);
        if (owner === "module" && left.name.text === "exports") {
          // module.exports = function query(): looked up as query
          let fn = right;
          while (ts.isParenthesizedExpression(fn)) fn = fn.expression;
          if (ts.isFunctionExpression(fn) && fn.name) {
            emit(out, sf, path, s, fn.name, "function", scope);
          } else {
            const line = sf.getLineAndCharacterOfPosition(left.getStart(sf)).line + 1;
            out.push(JSON.stringify({ path, name: "module.exports", line, kind: "function",
                                      scope }));
          }
        } else if (owner === "exports" || owner === "module.exports") {
          emit(out, sf, path, s, left.name, "function", scope);
        } else {
          if (owner.endsWith(".prototype")) owner = owner.slice(0, -".prototype".length);
          emit(out, sf, path, s, left.name, "method", owner);
        }
      }
    } else if (ts.isExpressionStatement(s) && ts.isCallExpression(s.expression)) {
      callFunctions(out, sf, path, s.expression, scope);
    }
  }
}

// var x = require("m"), require("m").x, require("m")(y): an import
function isRequire(init) {
  while (init && (ts.isPropertyAccessExpression(init) ||
                  (ts.isCallExpression(init) && !isRequireCall(init)))) {
    init = init.expression;
  }
  return !!init && isRequireCall(init);
}

function isRequireCall(node) {
  return ts.isCallExpression(node) && ts.isIdentifier(node.expression) &&
    node.expression.text === "require" && node.arguments.length === 1 &&
    ts.isStringLiteral(node.arguments[0]);
}

// Named function expressions passed to a top-level call: defineGetter(req, 'protocol',
// function protocol() {}) defines req.protocol (a method of req), app.use(function
// logger() {}) the function logger. Function bodies, object literals and classes are not
// entered; nested calls and other expressions are.
function callFunctions(out, sf, path, call, scope) {
  const args = call.arguments;
  let owner = null;
  if (args.length >= 3 && (ts.isIdentifier(args[0]) || ts.isPropertyAccessExpression(args[0])) &&
      ts.isStringLiteralLike(args[1])) owner = args[0].getText(sf);
  args.forEach((arg, i) => {
    const visit = (node) => {
      if (ts.isFunctionExpression(node)) {
        if (node.name) {
          if (owner !== null && i >= 2) emit(out, sf, path, node, node.name, "method", owner);
          else emit(out, sf, path, node, node.name, "function", scope);
        }
        return;
      }
      if (ts.isArrowFunction(node) || ts.isObjectLiteralExpression(node) ||
          ts.isClassExpression(node)) return;
      ts.forEachChild(node, visit);
    };
    visit(arg);
  });
}

const files = fs.readFileSync(0, "utf8").split("\n").filter(Boolean);
const out = [];
for (const path of files) {
  const text = fs.readFileSync(path, "utf8");
  const kind = path.endsWith(".tsx") || path.endsWith(".jsx") ? ts.ScriptKind.TSX
    : path.endsWith(".js") || path.endsWith(".mjs") || path.endsWith(".cjs") ? ts.ScriptKind.JS
    : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  items(out, sf, path, sf.statements, null);
}
process.stdout.write(out.join("\n") + "\n");
