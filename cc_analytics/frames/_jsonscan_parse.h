/* JSON text, scanned in C: the single-pass strict parser shared by the extensions of the formats
 * (see _jsonscan.h, included first). Nothing here names a format.
 *
 * Included after the includer defines two types, with at least these fields:
 *   Scratch: Span *keys; Py_ssize_t keys_cap, keys_len; char *text; Py_ssize_t text_cap;
 *            Level *levels; Py_ssize_t levels_cap (buffers grown with PyMem_RawRealloc, so a
 *            parse may run without the GIL: free them with PyMem_RawFree);
 *   Parser:  const uint8_t *p, *end, *limit (bytes up to limit may be read past end);
 *            int depth, canonical_depth, canonical; Scratch *scratch.
 * canonical_depth > 0 marks text whose bytes must be what orjson.dumps writes of the value
 * (canonical is cleared where they are not); an includer without that need keeps it 0.
 *
 * Full validation in one pass: UTF-8, escapes (a lone surrogate is refused), numbers (an
 * integer beyond 64 bits, a float whose exponent may overflow: refused, for Python to read),
 * nesting up to MAX_DEPTH with an explicit stack (skip_value), no recursion.
 */
#ifndef CC_ANALYTICS_JSONSCAN_PARSE_H
#define CC_ANALYTICS_JSONSCAN_PARSE_H

static inline void skip_ws(Parser *P) {
    const uint8_t *p = P->p, *start = p;
    /* No line feed: a line's bytes hold none, and skim_lines parses to the end of the data
     * (a line feed inside the object ends the line there, and the line is declined). */
    while (p < P->end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    if (p != start && P->canonical_depth) P->canonical = 0;
    P->p = p;
}

/* --- Strings ------------------------------------------------------------------------------ */

/* A string starting at its opening quote; fills out (J_STR, span inside the quotes, measure). */
JSONSCAN_FN int parse_string(Parser *P, Val *out) {
    const uint8_t *p = P->p + 1, *end = P->end;
    Measure m = {0, 0, 1};
    int escaped = 0;
    const uint8_t *run = p;
    for (;;) {
        p = plain_run(p, end, P->limit);
        if (p >= end) return 0;
        uint8_t c = *p;
        if (c == '"') break;
        if (c < 0x20) return 0;
        m.units += p - run;
        if (c == '\\') {
            escaped = 1;
            if (end - p < 2) return 0;
            uint8_t x = p[1];
            switch (x) {
            case '"': case '\\': case 'b': case 'f': case 'n': case 'r': case 't':
                m.units += 1;
                p += 2;
                break;
            case '/':
                if (P->canonical_depth) P->canonical = 0; /* orjson writes a bare slash */
                m.units += 1;
                p += 2;
                break;
            case 'u': {
                unsigned u;
                if (end - p < 6 || !hex4(p + 2, &u)) return 0;
                if (u >= 0xDC00 && u <= 0xDFFF) return 0; /* lone low surrogate */
                if (u >= 0xD800 && u <= 0xDBFF) {
                    unsigned low;
                    if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || !hex4(p + 8, &low)) return 0;
                    if (low < 0xDC00 || low > 0xDFFF) return 0;
                    count_code_point(&m, 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00));
                    if (P->canonical_depth) P->canonical = 0;
                    p += 12;
                    break;
                }
                count_code_point(&m, u);
                if (P->canonical_depth) {
                    /* orjson escapes control characters as \u00xx (lowercase), except the short ones */
                    static const char digits[] = "0123456789abcdef";
                    if (u >= 0x20 || u == 0x08 || u == 0x09 || u == 0x0A || u == 0x0C || u == 0x0D || p[2] != '0' ||
                        p[3] != '0' || p[4] != digits[u >> 4] || p[5] != digits[u & 15])
                        P->canonical = 0;
                }
                p += 6;
                break;
            }
            default:
                return 0;
            }
        } else {
            do { /* a run of non-ASCII characters (CJK text is one) */
                unsigned cp;
                int n = utf8_sequence(p, end, &cp);
                if (!n) return 0;
                count_code_point(&m, cp);
                p += n;
            } while (p < end && *p >= 0x80);
        }
        run = p;
    }
    m.units += p - run;
    out->t = J_STR;
    out->s = P->p + 1;
    out->e = p;
    out->m = m;
    out->escaped = escaped;
    P->p = p + 1;
    return 1;
}

/* --- Numbers and literals ------------------------------------------------------------------- */

JSONSCAN_FN int parse_number(Parser *P, Val *out) {
    const uint8_t *p = P->p, *end = P->end, *start = p;
    int negative = 0;
    if (*p == '-') {
        negative = 1;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9') return 0;
    const uint8_t *digits = p;
    uint64_t value = 0;
    int overflow = 0;
    if (*p == '0') p++;
    else {
        while (p < end && *p >= '0' && *p <= '9') {
            unsigned d = (unsigned)(*p - '0');
            if (value > (UINT64_MAX - d) / 10) overflow = 1;
            else value = value * 10 + d;
            p++;
        }
    }
    Py_ssize_t int_digits = p - digits;
    int is_float = 0;
    if (p < end && *p == '.') {
        is_float = 1;
        p++;
        if (p >= end || *p < '0' || *p > '9') return 0;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_float = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        const uint8_t *exponent = p;
        while (p < end && *p >= '0' && *p <= '9') p++;
        if (p == exponent) return 0;
        if (p - exponent > 2) return 0; /* may overflow a double: the walker reads it its own way */
    }
    if (is_float) {
        if (int_digits > 20) return 0;
        if (P->canonical_depth) P->canonical = 0;
        out->t = J_FLOAT;
    } else {
        if (overflow) return 0;
        if (negative) {
            if (value == 0) return 0; /* -0 */
            if (value > (uint64_t)INT64_MAX + 1) return 0;
            out->i = value == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)value;
        } else {
            if (value > (uint64_t)INT64_MAX) return 0;
            out->i = (int64_t)value;
        }
        out->t = J_INT;
    }
    out->s = start;
    out->e = p;
    P->p = p;
    return 1;
}

JSONSCAN_FN int parse_literal(Parser *P, Val *out, const char *word, Py_ssize_t n, JType t) {
    if (P->end - P->p < n || memcmp(P->p, word, (size_t)n) != 0) return 0;
    out->t = t;
    out->s = P->p;
    out->e = P->p + n;
    P->p += n;
    return 1;
}

/* A string, a number or a literal at P->p (not an array or an object). */
static inline int parse_scalar(Parser *P, Val *out) {
    switch (*P->p) {
    case '"':
        return parse_string(P, out);
    case 't':
        return parse_literal(P, out, "true", 4, J_TRUE);
    case 'f':
        return parse_literal(P, out, "false", 5, J_FALSE);
    case 'n':
        return parse_literal(P, out, "null", 4, J_NULL);
    default:
        return parse_number(P, out);
    }
}

/* --- Objects and arrays ------------------------------------------------------------------- */

JSONSCAN_FN int span_cmp(const void *a, const void *b) {
    const Span *x = a, *y = b;
    Py_ssize_t nx = x->e - x->s, ny = y->e - y->s;
    if (nx != ny) return nx < ny ? -1 : 1;
    return memcmp(x->s, y->s, (size_t)nx);
}

/* Whether the keys base.. of the key stack hold a repeat (raw bytes; no key holds an escape). */
JSONSCAN_FN int repeated(Scratch *S, Py_ssize_t base) {
    Span *keys = S->keys + base;
    Py_ssize_t n = S->keys_len - base;
    if (n < 2) return 0;
    if (n <= 24) {
        for (Py_ssize_t a = 1; a < n; a++) {
            Py_ssize_t la = keys[a].e - keys[a].s;
            for (Py_ssize_t b = 0; b < a; b++)
                if (keys[b].e - keys[b].s == la && memcmp(keys[a].s, keys[b].s, (size_t)la) == 0) return 1;
        }
        return 0;
    }
    qsort(keys, (size_t)n, sizeof(Span), span_cmp);
    for (Py_ssize_t a = 1; a < n; a++)
        if (span_cmp(&keys[a - 1], &keys[a]) == 0) return 1;
    return 0;
}

JSONSCAN_FN int push_key(Scratch *S, const uint8_t *s, const uint8_t *e) {
    if (S->keys_len == S->keys_cap) {
        Py_ssize_t cap = S->keys_cap ? S->keys_cap * 2 : 256;
        Span *grown = PyMem_RawRealloc(S->keys, (size_t)cap * sizeof(Span));
        if (!grown) return 0;
        S->keys = grown;
        S->keys_cap = cap;
    }
    S->keys[S->keys_len].s = s;
    S->keys[S->keys_len].e = e;
    S->keys_len++;
    return 1;
}

/* After a member or an element: 1 when a ',' follows (the next one is at P->p), 2 at the
   closing bracket ``close`` (not consumed), 0 for anything else. */
static inline int after_item(Parser *P, uint8_t close) {
    skip_ws(P);
    if (P->p >= P->end) return 0;
    if (*P->p == ',') {
        P->p++;
        skip_ws(P);
        return 1;
    }
    return *P->p == close ? 2 : 0;
}

/* An array or an object at P->p from which no field is read, validated without recursion (its
 * nesting counts in P->depth against MAX_DEPTH). Inside a tool input (canonical_depth) a
 * repeated key makes the input's text other than what orjson writes of it. */
JSONSCAN_FN int skip_value(Parser *P, Val *out) {
    const uint8_t *start = P->p;
    int keys = P->canonical_depth > 0;
    Py_ssize_t top = 0;
    Level *level;
    Val scalar;
    for (;;) { /* P->p is at an opening bracket */
        if (++P->depth > MAX_DEPTH) return 0;
        if (top == P->scratch->levels_cap) {
            Py_ssize_t cap = P->scratch->levels_cap ? P->scratch->levels_cap * 2 : 64;
            Level *grown = PyMem_RawRealloc(P->scratch->levels, (size_t)cap * sizeof(Level));
            if (!grown) return 0;
            P->scratch->levels = grown;
            P->scratch->levels_cap = cap;
        }
        level = &P->scratch->levels[top++];
        level->close = *P->p == '{' ? '}' : ']';
        level->base = P->scratch->keys_len;
        P->p++;
        skip_ws(P);
        if (P->p >= P->end) return 0;
        if (top == 1) out->empty = *P->p == level->close;
        if (*P->p == level->close) goto closing;
    member:
        if (level->close == '}') {
            Val key;
            if (*P->p != '"' || !parse_string(P, &key) || key.escaped) return 0;
            if (keys && !push_key(P->scratch, key.s, key.e)) return 0;
            skip_ws(P);
            if (P->p >= P->end || *P->p != ':') return 0;
            P->p++;
            skip_ws(P);
            if (P->p >= P->end) return 0;
        }
        if (*P->p == '{' || *P->p == '[') continue; /* open it */
        if (!parse_scalar(P, &scalar)) return 0;
        for (;;) { /* after a value: the next member, or the closing bracket */
            int next = after_item(P, level->close);
            if (next == 1) goto member;
            if (next == 0) return 0;
        closing:
            P->p++;
            P->depth--;
            if (keys && level->close == '}') {
                if (repeated(P->scratch, level->base)) P->canonical = 0;
                P->scratch->keys_len = level->base;
            }
            if (--top == 0) {
                out->t = *start == '{' ? J_OBJ : J_ARR;
                out->s = start;
                out->e = P->p;
                return 1;
            }
            level = &P->scratch->levels[top - 1];
        }
    }
}

JSONSCAN_FN int reserve_text(Scratch *S, Py_ssize_t n) {
    if (n <= S->text_cap) return 1;
    Py_ssize_t cap = n < 4096 ? 4096 : n * 2;
    char *grown = PyMem_RawRealloc(S->text, (size_t)cap);
    if (!grown) return 0;
    S->text = grown;
    S->text_cap = cap;
    return 1;
}

/* The Python str of a J_STR value. */
JSONSCAN_FN PyObject *str_of(Scratch *S, const Val *v) {
    Py_ssize_t n = v->e - v->s;
    if (!v->escaped) {
        if (v->m.ascii) return ascii_str((const char *)v->s, n);
        return PyUnicode_DecodeUTF8((const char *)v->s, n, NULL);
    }
    if (!reserve_text(S, n)) return PyErr_NoMemory();
    Py_ssize_t len = unescape(v->s, v->e, S->text);
    return v->m.ascii ? ascii_str(S->text, len) : PyUnicode_DecodeUTF8(S->text, len, NULL);
}

JSONSCAN_FN PyObject *str_or_none(Scratch *S, const Val *v) {
    if (v->t == J_STR) return str_of(S, v);
    Py_RETURN_NONE;
}

#endif /* CC_ANALYTICS_JSONSCAN_PARSE_H */
