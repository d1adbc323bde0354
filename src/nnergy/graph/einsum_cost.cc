#include "nnergy/graph/einsum_cost.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <variant>

#include "nnergy/core/error.h"
#include "nnergy/graph/data_type.h"

namespace nnergy::graph {

namespace {

// A subscript: a letter (its character code) or one dimension covered by "..." (kEllipsisBase
// plus its position among the right-aligned broadcast dimensions).
using Subscript = int;
constexpr Subscript kEllipsisBase = 256;

using Term = std::vector<Subscript>;

struct Equation {
  std::vector<Term> inputs;
  std::set<Subscript> output;
  std::map<Subscript, double> size;
};

class EinsumParser {
 public:
  EinsumParser(const CostInput& c, std::string equation) : c_(c), equation_(std::move(equation)) {}

  Equation parse() {
    std::string text;
    for (char ch : equation_) {
      if (!std::isspace(static_cast<unsigned char>(ch))) text += ch;
    }
    const std::size_t arrow = text.find("->");
    if (arrow != std::string::npos && text.find("->", arrow + 2) != std::string::npos) {
      fail("more than one '->'");
    }
    const std::string lhs = text.substr(0, arrow);
    std::vector<std::string> terms;
    std::size_t start = 0;
    for (std::size_t comma = lhs.find(',');; comma = lhs.find(',', start)) {
      terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (terms.size() != c_.in.size()) {
      fail(std::to_string(terms.size()) + " operand term(s) for " + std::to_string(c_.in.size()) +
           " input(s)");
    }
    std::vector<std::vector<Subscript>> raw;  // letters, with -1 where "..." stands
    std::size_t ellipsis_rank = 0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      raw.push_back(letters_of(terms[i]));
      const std::size_t rank = c_.in[i]->shape.size();
      const std::size_t named = static_cast<std::size_t>(
          std::count_if(raw[i].begin(), raw[i].end(), [](Subscript s) { return s >= 0; }));
      const bool has_ellipsis = named != raw[i].size();
      if (has_ellipsis ? named > rank : named != rank) {
        fail("term '" + terms[i] + "' has " + std::to_string(named) + " letter(s) but input " +
             std::to_string(i) + " is " + to_string(c_.in[i]->shape));
      }
      if (has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - named);
    }
    Equation eq;
    std::map<Subscript, int> uses;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const Shape& shape = c_.in[i]->shape;
      const std::size_t covered = shape.size() + 1 - raw[i].size();  // dims under "..."
      Term term;
      std::size_t axis = 0;
      for (Subscript s : raw[i]) {
        if (s >= 0) {
          bind(eq, s, shape[axis++]);
          term.push_back(s);
          continue;
        }
        for (std::size_t k = 0; k < covered; ++k) {
          const Subscript e = kEllipsisBase + static_cast<Subscript>(ellipsis_rank - covered + k);
          bind(eq, e, shape[axis++]);
          term.push_back(e);
        }
      }
      for (Subscript s : std::set<Subscript>(term.begin(), term.end())) ++uses[s];
      eq.inputs.push_back(term);
    }
    auto keep_ellipsis = [&] {
      for (std::size_t k = 0; k < ellipsis_rank; ++k) {
        eq.output.insert(kEllipsisBase + static_cast<Subscript>(k));
      }
    };
    if (arrow == std::string::npos) {
      // Implicit output: the "..." dimensions, then the letters used exactly once.
      keep_ellipsis();
      for (const auto& [s, n] : uses) {
        if (s < kEllipsisBase && n == 1) eq.output.insert(s);
      }
      return eq;
    }
    const std::string rhs = text.substr(arrow + 2);
    std::set<Subscript> seen;
    for (Subscript s : letters_of(rhs)) {
      if (s < 0) {
        const bool in_inputs = std::any_of(raw.begin(), raw.end(), [](const auto& r) {
          return std::find(r.begin(), r.end(), -1) != r.end();
        });
        if (!in_inputs) fail("'...' in the output but in no input");
        keep_ellipsis();
        continue;
      }
      if (!seen.insert(s).second)
        fail(std::string("output repeats '") + static_cast<char>(s) + "'");
      if (eq.size.count(s) == 0)
        fail(std::string("output letter '") + static_cast<char>(s) + "' in no input");
      eq.output.insert(s);
    }
    return eq;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidInput("node '" + c_.node.name + "' (Einsum): equation '" + equation_ +
                       "': " + what);
  }

  // The letters of one term; "..." becomes -1.
  std::vector<Subscript> letters_of(const std::string& term) const {
    std::vector<Subscript> letters;
    bool ellipsis = false;
    for (std::size_t i = 0; i < term.size(); ++i) {
      const char ch = term[i];
      if (std::isalpha(static_cast<unsigned char>(ch))) {
        letters.push_back(static_cast<unsigned char>(ch));
      } else if (term.compare(i, 3, "...") == 0 && !ellipsis) {
        ellipsis = true;
        letters.push_back(-1);
        i += 2;
      } else {
        fail("unexpected '" + term.substr(i, 1) + "' in term '" + term + "'");
      }
    }
    return letters;
  }

  // Binds subscript s to a dimension; size 1 broadcasts against any size.
  void bind(Equation& eq, Subscript s, std::int64_t dim_size) const {
    const double d = static_cast<double>(dim_size);
    auto [it, inserted] = eq.size.emplace(s, d);
    if (inserted || it->second == d || d == 1) return;
    if (it->second == 1) {
      it->second = d;
      return;
    }
    fail(s < kEllipsisBase
             ? std::string("letter '") + static_cast<char>(s) + "' is bound to both " +
                   std::to_string(static_cast<std::int64_t>(it->second)) + " and " +
                   std::to_string(dim_size)
             : "'...' dimensions do not broadcast");
  }

  const CostInput& c_;
  std::string equation_;
};

double volume(const Equation& eq, const std::set<Subscript>& subscripts) {
  double v = 1;
  for (Subscript s : subscripts) v *= eq.size.at(s);
  return v;
}

}  // namespace

OpCost einsum_cost(const CostInput& c) {
  auto it = c.node.attributes.find("equation");
  if (it == c.node.attributes.end() || !std::holds_alternative<std::string>(it->second)) {
    throw InvalidInput("node '" + c.node.name + "' (Einsum): no string attribute 'equation'");
  }
  if (c.in.empty()) throw InvalidInput("node '" + c.node.name + "' (Einsum): no inputs");
  const Equation eq = EinsumParser(c, std::get<std::string>(it->second)).parse();

  if (eq.inputs.size() == 1) {
    // Transpose, diagonal or sum of one operand: one pass over the input.
    PassCost forward = pass(0, c.in_elements(0), c.in_bytes(0) + c.out_bytes(), 1);
    PassCost backward;
    if (c.any_grad()) backward = pass(0, 0, c.out_bytes() + c.grad_in_bytes(), 1);
    return same_forward(OpClass::kDataMovement, forward, backward);
  }

  // Left-to-right pairwise contraction: each step multiplies the running result by the next
  // operand over the union of their subscripts and sums out those no later operand or the
  // output needs.
  const double element_bytes = static_cast<double>(bytes_per_element(c.in[0]->dtype));
  std::set<Subscript> current(eq.inputs[0].begin(), eq.inputs[0].end());
  double points = 0;
  double intermediate_bytes = 0;
  bool contracts = false;
  for (std::size_t k = 1; k < eq.inputs.size(); ++k) {
    const std::set<Subscript> next(eq.inputs[k].begin(), eq.inputs[k].end());
    std::set<Subscript> needed = eq.output;
    for (std::size_t later = k + 1; later < eq.inputs.size(); ++later) {
      needed.insert(eq.inputs[later].begin(), eq.inputs[later].end());
    }
    std::set<Subscript> all = current;
    all.insert(next.begin(), next.end());
    points += volume(eq, all);
    std::set<Subscript> kept;
    for (Subscript s : all) {
      if (needed.count(s) > 0) {
        kept.insert(s);
      } else if (current.count(s) > 0 && next.count(s) > 0) {
        contracts = true;  // summed over a letter both operands share: a GEMM
      }
    }
    // A result that a later step consumes is written and read once more.
    if (k + 1 < eq.inputs.size()) intermediate_bytes += 2 * volume(eq, kept) * element_bytes;
    current = kept;
  }
  const double steps = static_cast<double>(eq.inputs.size() - 1);
  const double macs = contracts ? points : 0.0;
  const double flops = contracts ? 2 * points : points;
  PassCost forward =
      pass(macs, flops, c.all_in_bytes() + c.out_bytes() + intermediate_bytes, steps);
  PassCost backward;
  for (std::size_t i = 0; i < c.in.size(); ++i) {
    // The gradient of an operand contracts dY with the other operands (the forward work
    // again): reads dY and the other operands, writes the operand's gradient.
    if (c.needs_grad(i)) {
      backward += pass(macs, flops, c.out_bytes() + c.all_in_bytes() + intermediate_bytes, steps);
    }
  }
  return same_forward(contracts ? OpClass::kMatrix : OpClass::kElementwise, forward, backward);
}

}  // namespace nnergy::graph
