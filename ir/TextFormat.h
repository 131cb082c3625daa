// The .fir text form: parser and printer. print(parse(text)) == text for
// any text the printer produced. Grammar (docs/ir.md has the full version):
//
//   module   := func+
//   func     := 'func' '@' name '(' (arg (',' arg)*)? ')' '->' results '{' op* ret '}'
//   arg      := '%' name ':' type
//   results  := type | '(' (type (',' type)*)? ')'
//   op       := '%' name (',' '%' name)* '=' opname '(' operands? ')' attrs? (':' types)? body?
//   body     := '{' 'body' '(' (arg (',' arg)*)? ')' ':' op* ret '}'   (kernel only; no nesting)
//   ret      := 'return' ('%' name (',' '%' name)*)?
//   attrs    := '{' name '=' attr (',' name '=' attr)* '}'
//   type     := dtype '[' (dim (',' dim)*)? ']' ('{' layout '}')?
//   dim      := integer | identifier | '?'
//   attr     := integer | float | string | true | false | dtype | '[' list ']'
//             | 'dense' '<' (literal | '[' literals ']' | '"0x' hex '"') '>'
//
// Comments run from '//' to the end of the line.
#pragma once

#include "ir/Attribute.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace fusec {

/// Parses and verifies a module. `file` names the source in diagnostics.
/// Returns null after reporting every error found.
std::unique_ptr<Module> parseModule(std::string_view text, const std::string &file,
                                    Diagnostics &diags);

/// Parses one attribute literal (as used for defaults in Ops.def). Dense
/// literals are not accepted here. Returns nullopt on malformed input.
std::optional<Attribute> parseAttributeLiteral(std::string_view text);

void printGraph(const Graph &g, std::ostream &os);
void printModule(const Module &m, std::ostream &os);
std::string toString(const Graph &g);
std::string toString(const Attribute &a);

} // namespace fusec
