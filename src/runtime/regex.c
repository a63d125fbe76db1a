/* RegexFullMatch's matcher (docs/graph-runtime.md, "Strings"): a small subset of RE2's syntax
 * compiled to a program that a Pike VM runs over the string's code points, all threads in step,
 * so a match costs O(pattern size x string length) whatever the pattern (no backtracking to blow
 * up). The subset: literals, `.`, classes `[...]` (ranges, `^` negation, escapes), `\d \D \w \W
 * \s \S` (ASCII, as RE2's), escaped punctuation, `\t \n \r \f \v`, groups `(...)` and `(?:...)`,
 * `|`, the quantifiers `* + ? {n} {n,} {n,m}` greedy or lazy (a full match asks only whether one
 * exists, so laziness changes nothing), and the assertions `^ $ \b \B` (RE2's defaults: not
 * multi-line). Anything else (flags, named groups, Unicode classes, backreferences) is Unsupported
 * naming the construct. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_ops.h"

/* The most instructions a pattern compiles to ({n,m} copies its operand m times). */
#define PROG_MAX 20000

enum { I_CLASS, I_SPLIT, I_JMP, I_BEGIN, I_END, I_WORD, I_NOT_WORD, I_MATCH };

typedef struct inst {
  int op, x, y; /* I_SPLIT: both; I_JMP: x; I_CLASS: its ranges at x, count y */
  bool negated;
} inst;

struct om_regex {
  OM_VEC(inst) code;
  OM_VEC(uint32_t) ranges; /* lo, hi pairs */
};

/* A parse tree node: a class, a sequence, an alternation, a repeat or an assertion. */
typedef struct node {
  enum { N_CLASS, N_CAT, N_ALT, N_REPEAT, N_ASSERT } kind;
  int a, b;             /* N_CLASS: ranges' first pair and count; N_REPEAT: min, max (-1 none); N_ASSERT: its op */
  bool negated;
  struct node **kids;   /* N_CAT, N_ALT: n; N_REPEAT: 1 */
  int n;
} node;

typedef struct parser {
  const char *start, *p, *end;
  om_regex *re;
  const char *who;
  int depth;
} parser;

static bool refuse(parser *ps, const char *what) {
  return om__fail(OM_ERR_UNSUPPORTED, "%s: pattern construct %s at offset %d is not supported (the graph layer's RE2 subset: docs/graph-runtime.md)",
                  ps->who, what, (int)(ps->p - ps->start));
}

/* The next code point of s[*k..len) (a byte that is not UTF-8 stands for itself). */
static uint32_t next_cp(const unsigned char *s, size_t len, size_t *k) {
  uint32_t c = s[*k];
  size_t more = c >= 0xf0 && c < 0xf8 ? 3 : c >= 0xe0 && c < 0xf0 ? 2 : c >= 0xc0 && c < 0xe0 ? 1 : 0;
  if (*k + more >= len) more = 0;
  for (size_t q = 1; q <= more; q++)
    if ((s[*k + q] & 0xc0) != 0x80) more = 0;
  if (more) c &= 0x3fu >> more;
  for (size_t q = 1; q <= more; q++) c = c << 6 | (s[*k + q] & 0x3f);
  *k += 1 + more;
  return c;
}

static node *new_node(parser *ps, int kind) {
  node *n = om__alloc(sizeof *n, ps->who);
  if (n) *n = (node){.kind = kind};
  return n;
}
static void free_node(node *n) {
  if (!n) return;
  for (int k = 0; k < n->n; k++) free_node(n->kids[k]);
  free(n->kids);
  free(n);
}
static bool add_kid(parser *ps, node *n, node *kid) {
  if (!kid) return false;
  node **k = realloc(n->kids, sizeof *k * (size_t)(n->n + 1));
  if (!k) return free_node(kid), om__fail(OM_ERR_OUT_OF_MEMORY, "%s: out of memory", ps->who);
  n->kids = k, n->kids[n->n++] = kid;
  return true;
}
static bool add_range(parser *ps, uint32_t lo, uint32_t hi) {
  uint32_t *r = OM_VEC_PUSH_SLOT(ps->re->ranges), *r2 = r ? OM_VEC_PUSH_SLOT(ps->re->ranges) : NULL;
  if (!r2) return false;
  ps->re->ranges.v[ps->re->ranges.n - 2] = lo, ps->re->ranges.v[ps->re->ranges.n - 1] = hi;
  return true;
}

/* The ranges of \d, \w or \s (upper case: negated by the caller). */
static bool perl_class(parser *ps, char c) {
  switch (c | 0x20) {
    case 'd': return add_range(ps, '0', '9');
    case 'w': return add_range(ps, '0', '9') && add_range(ps, 'A', 'Z') && add_range(ps, '_', '_') && add_range(ps, 'a', 'z');
    case 's': return add_range(ps, '\t', '\n') && add_range(ps, '\f', '\r') && add_range(ps, ' ', ' ');
    default: return false;
  }
}

/* An escape's literal (after the backslash), or -1 when it is none. */
static int64_t escape_literal(char c) {
  static const char controls[] = "t\tn\nr\rf\fv\v";
  for (int k = 0; controls[k]; k += 2)
    if (c == controls[k]) return controls[k + 1];
  if ((c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e)) return c; /* punctuation */
  return -1;
}

/* A class node holding the ranges added since `first` pairs. */
static node *class_node(parser *ps, int first, bool negated) {
  node *n = new_node(ps, N_CLASS);
  if (n) n->a = first, n->b = ps->re->ranges.n / 2 - first, n->negated = negated;
  return n;
}

static node *parse_alt(parser *ps);

/* `[...]`, the `[` read. */
static node *parse_bracket(parser *ps) {
  int first = ps->re->ranges.n / 2;
  bool negated = ps->p < ps->end && *ps->p == '^';
  ps->p += negated;
  for (bool any = false; ; any = true) {
    if (ps->p >= ps->end) return om__fail(OM_ERR_FORMAT, "%s: a class is not closed", ps->who), NULL;
    if (*ps->p == ']' && any) break;
    if (*ps->p == '[' && ps->p + 1 < ps->end && ps->p[1] == ':') return refuse(ps, "[:class:]"), NULL;
    uint32_t lo;
    if (*ps->p == '\\') {
      if (++ps->p >= ps->end) return om__fail(OM_ERR_FORMAT, "%s: the pattern ends in a backslash", ps->who), NULL;
      char c = *ps->p++;
      if (strchr("dws", c)) { if (!perl_class(ps, c)) return NULL; continue; }
      int64_t lit = escape_literal(c);
      if (lit < 0) return refuse(ps, "an escape in a class other than punctuation, \\t \\n \\r \\f \\v, \\d \\w \\s"), NULL;
      lo = (uint32_t)lit;
    } else {
      size_t k = 0;
      lo = next_cp((const unsigned char *)ps->p, (size_t)(ps->end - ps->p), &k);
      ps->p += k;
    }
    uint32_t hi = lo;
    if (ps->p + 1 < ps->end && *ps->p == '-' && ps->p[1] != ']') {
      ps->p++;
      if (*ps->p == '\\') {
        int64_t lit = ps->p + 1 < ps->end ? escape_literal(ps->p[1]) : -1;
        if (lit < 0) return refuse(ps, "a range ending in an escape that is no literal"), NULL;
        hi = (uint32_t)lit, ps->p += 2;
      } else {
        size_t k = 0;
        hi = next_cp((const unsigned char *)ps->p, (size_t)(ps->end - ps->p), &k);
        ps->p += k;
      }
      if (hi < lo) return om__fail(OM_ERR_FORMAT, "%s: a class range runs backwards", ps->who), NULL;
    }
    if (!add_range(ps, lo, hi)) return NULL;
  }
  ps->p++;
  return class_node(ps, first, negated);
}

/* One atom: a literal, `.`, a class, an escape, a group or an assertion. */
static node *parse_atom(parser *ps) {
  char c = *ps->p;
  int first = ps->re->ranges.n / 2;
  if (c == '(') {
    ps->p++;
    if (ps->p < ps->end && *ps->p == '?') {
      if (ps->p + 1 < ps->end && ps->p[1] == ':') ps->p += 2;
      else return refuse(ps, "a group with flags or a name ((?...)"), NULL;
    }
    if (++ps->depth > 100) return refuse(ps, "groups nested more than 100 deep"), NULL;
    node *n = parse_alt(ps);
    ps->depth--;
    if (n && (ps->p >= ps->end || *ps->p != ')')) return free_node(n), om__fail(OM_ERR_FORMAT, "%s: a group is not closed", ps->who), NULL;
    ps->p++;
    return n;
  }
  if (c == '[') return ps->p++, parse_bracket(ps);
  if (c == '.') return ps->p++, add_range(ps, '\n', '\n') ? class_node(ps, first, true) : NULL; /* any but a newline */
  if (c == '^' || c == '$') {
    node *n = new_node(ps, N_ASSERT);
    if (n) n->a = c == '^' ? I_BEGIN : I_END;
    ps->p++;
    return n;
  }
  if (c == '*' || c == '+' || c == '?' || c == '{') return refuse(ps, "a quantifier with nothing before it"), NULL;
  if (c == '\\') {
    if (++ps->p >= ps->end) return om__fail(OM_ERR_FORMAT, "%s: the pattern ends in a backslash", ps->who), NULL;
    c = *ps->p++;
    if (c == 'b' || c == 'B') {
      node *n = new_node(ps, N_ASSERT);
      if (n) n->a = c == 'b' ? I_WORD : I_NOT_WORD;
      return n;
    }
    if (strchr("dwsDWS", c)) return perl_class(ps, c) ? class_node(ps, first, c < 'a') : NULL;
    int64_t lit = escape_literal(c);
    if (lit < 0) return refuse(ps, "an escape other than punctuation, \\t \\n \\r \\f \\v, \\d \\w \\s \\b and their negations"), NULL;
    return add_range(ps, (uint32_t)lit, (uint32_t)lit) ? class_node(ps, first, false) : NULL;
  }
  size_t k = 0;
  uint32_t cp = next_cp((const unsigned char *)ps->p, (size_t)(ps->end - ps->p), &k);
  ps->p += k;
  return add_range(ps, cp, cp) ? class_node(ps, first, false) : NULL;
}

/* A number of a counted repeat at ps->p (at most 1000, as RE2's), or -1. */
static int parse_count(parser *ps) {
  int v = -1;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9' && v <= 1000) v = (v < 0 ? 0 : v * 10) + (*ps->p++ - '0');
  return v;
}

/* An atom and its quantifiers. */
static node *parse_repeat(parser *ps) {
  node *n = parse_atom(ps);
  while (n && ps->p < ps->end && strchr("*+?{", *ps->p)) {
    int lo = 0, hi = -1;
    if (*ps->p == '{') {
      const char *at = ps->p++;
      lo = parse_count(ps), hi = lo;
      if (ps->p < ps->end && *ps->p == ',') ps->p++, hi = ps->p < ps->end && *ps->p == '}' ? -1 : parse_count(ps);
      if (lo < 0 || ps->p >= ps->end || *ps->p != '}' || (hi >= 0 && hi < lo) || lo > 1000 || hi > 1000) {
        ps->p = at;
        free_node(n);
        return refuse(ps, "a counted repeat that is not {n}, {n,} or {n,m} with n <= m <= 1000"), NULL;
      }
    } else {
      lo = *ps->p == '+', hi = *ps->p == '?' ? 1 : -1;
    }
    ps->p++;
    if (ps->p < ps->end && *ps->p == '?') ps->p++; /* lazy: the same for a full match */
    if (ps->p < ps->end && strchr("*+?{", *ps->p)) return free_node(n), refuse(ps, "a quantifier after a quantifier"), NULL;
    node *r = new_node(ps, N_REPEAT);
    if (!r || !add_kid(ps, r, n)) return free_node(r), r ? NULL : (free_node(n), NULL);
    r->a = lo, r->b = hi, n = r;
  }
  return n;
}

static node *parse_cat(parser *ps) {
  node *n = new_node(ps, N_CAT);
  while (n && ps->p < ps->end && *ps->p != '|' && *ps->p != ')')
    if (!add_kid(ps, n, parse_repeat(ps))) free_node(n), n = NULL;
  return n;
}

static node *parse_alt(parser *ps) {
  node *n = new_node(ps, N_ALT);
  if (n && !add_kid(ps, n, parse_cat(ps))) return free_node(n), NULL;
  while (n && ps->p < ps->end && *ps->p == '|')
    if (ps->p++, !add_kid(ps, n, parse_cat(ps))) free_node(n), n = NULL;
  return n;
}

static int emit(parser *ps, int op, int x, int y) {
  if (ps->re->code.n >= PROG_MAX) return refuse(ps, "a pattern this large (more than 20000 instructions once counted repeats are copied)"), -1;
  inst *i = OM_VEC_PUSH_SLOT(ps->re->code);
  if (!i) return -1;
  *i = (inst){.op = op, .x = x, .y = y};
  return ps->re->code.n - 1;
}

/* n's code at the end of the program. */
static bool compile(parser *ps, const node *n) {
  om_regex *re = ps->re;
  switch (n->kind) {
    case N_CLASS: {
      int at = emit(ps, I_CLASS, n->a, n->b);
      return at >= 0 && (re->code.v[at].negated = n->negated, true);
    }
    case N_ASSERT: return emit(ps, n->a, 0, 0) >= 0;
    case N_CAT:
      for (int k = 0; k < n->n; k++)
        if (!compile(ps, n->kids[k])) return false;
      return true;
    case N_ALT: { /* split L1, next; L1: a; jmp end; next: split ... */
      int *jumps = om__alloc(sizeof(int) * (size_t)(n->n + 1), ps->who), nj = 0;
      bool ok = jumps != NULL;
      for (int k = 0; ok && k < n->n; k++) {
        int split = k + 1 < n->n ? emit(ps, I_SPLIT, 0, 0) : -1;
        if (k + 1 < n->n && split < 0) ok = false;
        if (split >= 0) re->code.v[split].x = split + 1;
        ok = ok && compile(ps, n->kids[k]);
        if (ok && k + 1 < n->n) ok = (jumps[nj++] = emit(ps, I_JMP, 0, 0)) >= 0;
        if (ok && split >= 0) re->code.v[split].y = re->code.n;
      }
      for (int k = 0; ok && k < nj; k++) re->code.v[jumps[k]].x = re->code.n;
      free(jumps);
      return ok;
    }
    case N_REPEAT: {
      for (int k = 0; k < n->a; k++)
        if (!compile(ps, n->kids[0])) return false;
      if (n->b < 0) { /* L: split body, end; body; jmp L */
        int split = emit(ps, I_SPLIT, 0, 0);
        if (split < 0 || !compile(ps, n->kids[0])) return false;
        if (emit(ps, I_JMP, split, 0) < 0) return false;
        re->code.v[split].x = split + 1, re->code.v[split].y = re->code.n;
        return true;
      }
      int *splits = om__alloc(sizeof(int) * (size_t)(n->b - n->a + 1), ps->who), ns = 0; /* each optional copy: split body, end */
      bool ok = splits != NULL;
      for (int k = n->a; ok && k < n->b; k++) {
        ok = (splits[ns++] = emit(ps, I_SPLIT, 0, 0)) >= 0;
        if (ok) re->code.v[splits[ns - 1]].x = splits[ns - 1] + 1;
        ok = ok && compile(ps, n->kids[0]);
      }
      for (int k = 0; ok && k < ns; k++) re->code.v[splits[k]].y = re->code.n;
      free(splits);
      return ok;
    }
  }
  return false;
}

om_regex *om__regex_compile(const char *pattern, const char *who) {
  om_regex *re = om__alloc(sizeof *re, who);
  if (!re) return NULL;
  memset(re, 0, sizeof *re);
  parser ps = {.start = pattern, .p = pattern, .end = pattern + strlen(pattern), .re = re, .who = who};
  node *tree = parse_alt(&ps);
  bool ok = tree != NULL;
  if (ok && ps.p < ps.end) ok = om__fail(OM_ERR_FORMAT, "%s: an unmatched ')' at offset %d", who, (int)(ps.p - pattern));
  ok = ok && compile(&ps, tree) && emit(&ps, I_MATCH, 0, 0) >= 0;
  free_node(tree);
  if (!ok) return om__regex_free(re), NULL;
  return re;
}

void om__regex_free(om_regex *re) {
  if (!re) return;
  free(re->code.v);
  free(re->ranges.v);
  free(re);
}

static bool is_word(uint32_t c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

/* Adds pc to the thread list (on: marks per instruction for this step), following jumps, splits and
 * the assertions that hold between code points prev and next (-1 at an end); stack: room for the
 * program's size (each split is pushed once a step). */
static void add_thread(const om_regex *re, int *list, int *n, int *on, int step, int pc, int64_t prev, int64_t next, int *stack) {
  bool word = (prev >= 0 && is_word((uint32_t)prev)) != (next >= 0 && is_word((uint32_t)next));
  int sp = 0;
  stack[sp++] = pc;
  while (sp) {
    for (pc = stack[--sp]; on[pc] != step;) {
      on[pc] = step;
      const inst *i = &re->code.v[pc];
      if (i->op == I_JMP) pc = i->x;
      else if (i->op == I_SPLIT) stack[sp++] = i->y, pc = i->x;
      else if ((i->op == I_BEGIN && prev < 0) || (i->op == I_END && next < 0) || (i->op == I_WORD && word) || (i->op == I_NOT_WORD && !word)) pc++;
      else {
        if (i->op == I_CLASS || i->op == I_MATCH) list[(*n)++] = pc; /* else an assertion that fails here */
        break;
      }
    }
  }
}

int om__regex_full_match(const om_regex *re, const char *s, size_t len) {
  int m = re->code.n;
  int *a = calloc((size_t)m * 4 + 4, sizeof(int));
  if (!a) return om__fail(OM_ERR_OUT_OF_MEMORY, "RegexFullMatch: out of memory"), -1;
  int *cur = a, *nxt = a + m + 1, *on = a + 2 * m + 2, *stack = a + 3 * m + 3, nc = 0, nn = 0, step = 1;
  const unsigned char *u = (const unsigned char *)s;
  size_t after = 0;
  int64_t prev = -1, c = len ? (int64_t)next_cp(u, len, &after) : -1;
  add_thread(re, cur, &nc, on, step, 0, prev, c, stack);
  while (c >= 0 && nc) {
    size_t k2 = after;
    int64_t c2 = after < len ? (int64_t)next_cp(u, len, &k2) : -1;
    step++, nn = 0;
    for (int t = 0; t < nc; t++) {
      const inst *i = &re->code.v[cur[t]];
      if (i->op != I_CLASS) continue;
      bool in = false;
      for (int r = 0; r < i->y && !in; r++) in = (uint32_t)c >= re->ranges.v[2 * (i->x + r)] && (uint32_t)c <= re->ranges.v[2 * (i->x + r) + 1];
      if (in != i->negated) add_thread(re, nxt, &nn, on, step, cur[t] + 1, c, c2, stack);
    }
    int *sw = cur;
    cur = nxt, nxt = sw, nc = nn;
    prev = c, c = c2, after = k2;
  }
  bool match = false;
  for (int t = 0; t < nc && c < 0; t++) match |= re->code.v[cur[t]].op == I_MATCH;
  free(a);
  return match;
}
