// Parsing of functions and ops of the .fir text form, and the public entry
// point parseModule. Types are in ParseType.cpp, attribute literals in
// ParseAttribute.cpp, dense data in DenseLiteral.cpp.
//
// Each op is checked as it is read (names defined once and before use, the
// attributes against the op's signature, result types inferred when not
// written) so that later ops see well-typed operands; everything else about
// the graph is left to the verifier, which runs once the module is complete.
#include "ir/Parser.h"

#include "ir/TextFormat.h"
#include "ir/Verifier.h"

namespace fusec {

bool Parser::failAt(const Token &t, std::string message) {
  if (t.is(Tok::Error))
    message = t.error;
  diags.error(locOf(t), std::move(message));
  return false;
}

bool Parser::fail(std::string message) { return failAt(tok, std::move(message)); }

bool Parser::expect(Tok kind, std::string_view message) {
  if (!tok.is(kind))
    return fail(std::string(message));
  consume();
  return true;
}

// Resynchronizes after an error at the next `func @name`.
void Parser::skipToNextFunc() {
  while (!tok.is(Tok::Eof) && !(tok.isIdent("func") && lex.peek().is(Tok::GraphName)))
    consume();
}

std::unique_ptr<Module> Parser::parseModule() {
  auto module = std::make_unique<Module>();
  if (tok.is(Tok::Eof)) {
    fail("expected 'func'");
    return nullptr;
  }
  size_t errorsBefore = diags.errorCount();
  while (!tok.is(Tok::Eof)) {
    std::unique_ptr<Graph> g;
    if (parseFunc(g))
      module->graphs.push_back(std::move(g));
    else
      skipToNextFunc();
  }
  if (diags.errorCount() != errorsBefore)
    return nullptr;
  return module;
}

// 'func' '@' name: creates the graph.
bool Parser::parseFuncName(std::unique_ptr<Graph> &g) {
  Token funcTok = tok;
  if (!tok.isIdent("func"))
    return fail("expected 'func'");
  consume();
  if (!tok.is(Tok::GraphName))
    return fail("expected function name after 'func'");
  std::string name(tok.name());
  if (!funcNames.insert(name).second)
    return fail("redefinition of function '@" + name + "'");
  consume();
  g = std::make_unique<Graph>(name);
  g->setLoc(locOf(funcTok));
  return true;
}

// func := 'func' '@' name '(' args ')' '->' results '{' op* ret '}'
bool Parser::parseFunc(std::unique_ptr<Graph> &g) {
  Scope scope;
  std::vector<TensorType> declared;
  if (!parseFuncName(g) || !parseArguments(*g, scope, "expected '(' after function name") ||
      !expect(Tok::Arrow, "expected '->' after arguments") || !parseResultTypes(declared) ||
      !expect(Tok::LBrace, "expected '{' before function body"))
    return false;
  while (!tok.isIdent("return")) {
    if (!tok.is(Tok::ValueName))
      return fail("expected an op or 'return'");
    if (!parseOp(*g, scope, false))
      return false;
  }
  return parseReturn(*g, scope, declared) && expect(Tok::RBrace, "expected '}' after return");
}

bool Parser::defineName(const Token &name, const Scope &scope) {
  if (scope.count(name.name()))
    return failAt(name, "redefinition of value '" + std::string(name.spelling) + "'");
  return true;
}

// '(' (arg (',' arg)*)? ')' with arg := '%' name ':' type
bool Parser::parseArguments(Graph &g, Scope &scope, std::string_view openMessage) {
  if (!expect(Tok::LParen, openMessage))
    return false;
  return parseCommaList(Tok::RParen, "expected ')' after arguments", [&] {
    Token name = tok;
    if (!tok.is(Tok::ValueName))
      return fail("expected argument name");
    if (!defineName(name, scope))
      return false;
    consume();
    TensorType type;
    if (!expect(Tok::Colon, "expected ':' after argument name") || !parseType(type))
      return false;
    scope.emplace(std::string(name.name()), g.addInput(std::string(name.name()), type));
    return true;
  });
}

// results := type | '(' (type (',' type)*)? ')'
bool Parser::parseResultTypes(std::vector<TensorType> &types) {
  if (!tok.is(Tok::LParen)) {
    types.emplace_back();
    return parseType(types.back());
  }
  consume();
  return parseCommaList(Tok::RParen, "expected ')' after result types", [&] {
    types.emplace_back();
    return parseType(types.back());
  });
}

// op := names '=' opname '(' operands ')' attrs? (':' type (',' type)*)? body?
bool Parser::parseOp(Graph &g, Scope &scope, bool inBody) {
  OpText op;
  if (!parseOpHead(op, scope) || !parseOperands(op, scope))
    return false;
  if (tok.is(Tok::LBrace) && !startsBody() && !parseAttrDict(op))
    return false;
  if (tok.is(Tok::Colon)) {
    do {
      consume();
      op.types.emplace_back();
      if (!parseType(op.types.back()))
        return false;
    } while (tok.is(Tok::Comma));
  }
  bool isKernel = op.kind == OpKind::Kernel;
  if (isKernel && inBody)
    return failAt(op.opTok, "'kernel' cannot be nested in another kernel's body");
  if (isKernel && !startsBody())
    return failAt(op.opTok, "'kernel' needs a body: '{' and 'body' after its result types");
  if (!isKernel && startsBody())
    return fail("only 'kernel' has a body");
  if (isKernel && !parseBody(op))
    return false;
  return buildOp(g, scope, op);
}

// A '{' followed by `body` opens a kernel's body; any other '{' attributes.
bool Parser::startsBody() { return tok.is(Tok::LBrace) && lex.peek().isIdent("body"); }

// body := '{' 'body' '(' (arg (',' arg)*)? ')' ':' op* 'return' names '}'
// The body has a scope of its own: it sees only its arguments.
bool Parser::parseBody(OpText &op) {
  consume(); // '{'
  op.body = std::make_unique<Graph>("body");
  op.body->setLoc(locOf(tok));
  consume(); // 'body'
  Scope scope;
  if (!parseArguments(*op.body, scope, "expected '(' after 'body'") ||
      !expect(Tok::Colon, "expected ':' after the body's arguments"))
    return false;
  while (!tok.isIdent("return")) {
    if (!tok.is(Tok::ValueName))
      return fail("expected an op or 'return'");
    if (!parseOp(*op.body, scope, true))
      return false;
  }
  return parseBodyReturn(*op.body, scope) &&
         expect(Tok::RBrace, "expected '}' after the body's return");
}

// 'return' '%' name (',' '%' name)*: the body's outputs are the kernel's
// results; the verifier compares their types with the written ones.
bool Parser::parseBodyReturn(Graph &body, const Scope &scope) {
  consume(); // 'return'
  std::vector<Value *> values;
  while (true) {
    if (!parseReturnValue(body, scope, {}, values))
      return false;
    if (!tok.is(Tok::Comma))
      break;
    consume();
  }
  body.setOutputs(values);
  return true;
}

// names '=' opname
bool Parser::parseOpHead(OpText &op, const Scope &scope) {
  while (true) {
    if (!tok.is(Tok::ValueName))
      return fail("expected result name");
    for (const Token &prev : op.names)
      if (prev.spelling == tok.spelling)
        return fail("redefinition of value '" + std::string(tok.spelling) + "'");
    if (!defineName(tok, scope))
      return false;
    op.names.push_back(tok);
    consume();
    if (!tok.is(Tok::Comma))
      break;
    consume();
  }
  if (!expect(Tok::Equal, "expected '=' after result names"))
    return false;
  op.opTok = tok;
  if (!tok.is(Tok::Ident))
    return fail("expected op name");
  std::optional<OpKind> kind = lookupOp(tok.spelling);
  if (!kind)
    return fail("unknown op '" + std::string(tok.spelling) + "'");
  op.kind = *kind;
  consume();
  return true;
}

// '(' ('%' name (',' '%' name)*)? ')'
bool Parser::parseOperands(OpText &op, const Scope &scope) {
  if (!expect(Tok::LParen, "expected '(' after op name"))
    return false;
  return parseCommaList(Tok::RParen, "expected ')' after operands", [&] {
    if (!tok.is(Tok::ValueName))
      return fail("expected operand");
    auto it = scope.find(tok.name());
    if (it == scope.end())
      return fail("use of undefined value '" + std::string(tok.spelling) + "'");
    op.operands.push_back(it->second);
    consume();
    return true;
  });
}

// Turns each dense literal into data of the op's first result type.
bool Parser::resolveDense(OpText &op) {
  for (PendingDense &p : op.dense) {
    if (op.types.empty())
      return failAt(op.opTok, "dense literal needs an explicit result type");
    DenseRef data = materializeDense(p.literal, op.types[0], file, diags);
    if (!data)
      return false;
    op.attrs[p.attrIndex].value = Attribute(std::move(data));
  }
  return true;
}

bool Parser::buildOp(Graph &g, Scope &scope, OpText &op) {
  Loc loc = locOf(op.opTok);
  if (op.kind == OpKind::Const && op.types.empty())
    return failAt(op.opTok, "'const' needs an explicit result type");
  if (!resolveDense(op) || !checkAttributes(op.kind, op.attrs, loc, diags))
    return false;
  if (op.types.empty()) {
    std::vector<TensorType> operandTypes;
    for (Value *v : op.operands)
      operandTypes.push_back(v->type());
    if (!inferResultTypes(op.kind, operandTypes, op.attrs, loc, diags, op.types, op.body.get()))
      return false;
  }
  if (op.types.size() != op.names.size())
    return failAt(op.opTok, "'" + std::string(op.opTok.spelling) + "' has " +
                                std::to_string(op.types.size()) + " result(s) but " +
                                std::to_string(op.names.size()) + " name(s) are bound");
  Op *created = g.createOp(op.kind, op.operands, op.types, std::move(op.attrs), loc);
  created->setBody(std::move(op.body));
  for (size_t i = 0; i < op.names.size(); ++i) {
    std::string name(op.names[i].name());
    created->result(unsigned(i))->setName(name);
    scope.emplace(std::move(name), created->result(unsigned(i)));
  }
  return true;
}

// One value of a return, of the type the function declares in its place.
bool Parser::parseReturnValue(const Graph &g, const Scope &scope,
                              const std::vector<TensorType> &declared,
                              std::vector<Value *> &values) {
  if (!tok.is(Tok::ValueName))
    return fail("expected return value");
  auto it = scope.find(tok.name());
  if (it == scope.end())
    return fail("use of undefined value '" + std::string(tok.spelling) + "'");
  const TensorType &type = it->second->type();
  if (values.size() < declared.size() && type != declared[values.size()])
    return fail("return value " + std::string(tok.spelling) + " has type " + type.str() + " but @" +
                g.name() + " declares " + declared[values.size()].str());
  values.push_back(it->second);
  consume();
  return true;
}

// ret := 'return' ('%' name (',' '%' name)*)?
bool Parser::parseReturn(Graph &g, const Scope &scope, const std::vector<TensorType> &declared) {
  Token returnTok = tok;
  consume();
  std::vector<Value *> values;
  if (tok.is(Tok::ValueName)) {
    while (true) {
      if (!parseReturnValue(g, scope, declared, values))
        return false;
      if (!tok.is(Tok::Comma))
        break;
      consume();
    }
  }
  if (values.size() != declared.size())
    return failAt(returnTok, "return has " + std::to_string(values.size()) + " value(s) but " +
                                 "@" + g.name() + " declares " + std::to_string(declared.size()) +
                                 " result(s)");
  g.setOutputs(values);
  return true;
}

std::unique_ptr<Module> parseModule(std::string_view text, const std::string &file,
                                    Diagnostics &diags) {
  diags.addSource(file, std::string(text));
  Parser parser(text, file, diags);
  std::unique_ptr<Module> module = parser.parseModule();
  if (!module || !verify(*module, diags))
    return nullptr;
  return module;
}

} // namespace fusec
