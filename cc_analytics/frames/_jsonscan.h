/* JSON text, scanned in C: the types and byte-level primitives shared by the extensions of the
 * formats (cc_analytics/frames/<format>/_*.c). Nothing here names a format.
 *
 * This header holds what needs no parser: the value type (Val: a span of the line, its JSON type,
 * an int64 when it is one, and for a string its measure and whether it holds an escape), the
 * 8- and 16-byte string scans, UTF-8 and \u escapes, the text estimate of frames/estimate.py,
 * the bytes of a buffer and the end of a line. _jsonscan_parse.h holds the single-pass strict
 * parser over them (strings, numbers, literals, and values skipped without recursion).
 *
 * The numbers are the JSON line policy's (cc_analytics/jsonline.py; each extension exposes them
 * and a test holds them equal): nesting up to MAX_DEPTH levels, the first of a repeated key wins.
 *
 * Plain C99 and the CPython C API (3.11 and later); static functions only, no state.
 */
#ifndef CC_ANALYTICS_JSONSCAN_H
#define CC_ANALYTICS_JSONSCAN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__) && !defined(SKIM_PORTABLE)
#include <emmintrin.h>
#endif

#define MAX_DEPTH 25000      /* jsonline.MAX_DEPTH */
#define DUPLICATE_KEYS "first" /* jsonline.DUPLICATE_KEYS */

/* The functions here are static: an extension that does not call one is not warned about it. */
#if defined(__GNUC__)
#define JSONSCAN_FN static __attribute__((unused))
#else
#define JSONSCAN_FN static
#endif

typedef enum { J_ABSENT = 0, J_NULL, J_TRUE, J_FALSE, J_INT, J_FLOAT, J_STR, J_ARR, J_OBJ } JType;

/* What a string measures as text: UTF-16 units, CJK units (U+4E00-U+9FA5), pure ASCII. */
typedef struct {
    Py_ssize_t units;
    Py_ssize_t cjk;
    int ascii;
} Measure;

typedef struct {
    JType t;
    const uint8_t *s; /* span: inside the quotes for strings, the whole token otherwise */
    const uint8_t *e;
    int64_t i;        /* J_INT */
    Measure m;        /* J_STR: the decoded text */
    int escaped;      /* J_STR: holds a backslash escape */
    int empty;        /* J_ARR/J_OBJ: no element */
} Val;

typedef struct {
    const uint8_t *s, *e;
} Span;

/* The open containers of skip_value: the closing bracket and where the object's keys start. */
typedef struct {
    uint8_t close;
    Py_ssize_t base;
} Level;

/* --- Bytes ------------------------------------------------------------------------------- */

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static inline uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The high bit of each byte of v that is a quote, a backslash, a control character or not
 * ASCII. Borrows only run upwards from such a byte, so the lowest bit set is exact. */
static inline uint64_t special8(uint64_t v) {
    uint64_t quote = v ^ (ONES * 0x22), slash = v ^ (ONES * 0x5C);
    return (((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) | ((v - ONES * 0x20) & ~v) | v) & HIGHS;
}

/* The first byte of p..end that ends a plain ASCII run inside a string (or end): a quote, a
 * backslash, a control character or a byte >= 0x80. Bytes up to limit (the end of the data,
 * end <= limit) may be read: a short run is checked in one 16-byte load that reaches past end. */
#if defined(__SSE2__) && defined(__GNUC__) && !defined(SKIM_PORTABLE)
static inline const uint8_t *plain_run(const uint8_t *p, const uint8_t *end, const uint8_t *limit) {
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (p < end) {
        if (limit - p < 16) break;
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* signed: bytes >= 0x80 are negative, so "less than 0x20" takes them with the controls */
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                                   _mm_cmplt_epi8(v, space));
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        if (mask) {
            const uint8_t *at = p + __builtin_ctz(mask);
            return at < end ? at : end;
        }
        p += 16;
    }
    if (p >= end) return end;
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    return p;
}
#else
static inline const uint8_t *plain_run(const uint8_t *p, const uint8_t *end, const uint8_t *limit) {
    (void)limit;
    while (end - p >= 16) {
        uint64_t a = special8(load64(p)), b = special8(load64(p + 8));
        if (a | b) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return a ? p + (__builtin_ctzll(a) >> 3) : p + 8 + (__builtin_ctzll(b) >> 3);
#else
            if (!a) p += 8;
            break;
#endif
        }
        p += 16;
    }
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    return p;
}
#endif

static inline int hex4(const uint8_t *p, unsigned *out) {
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t c = p[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static inline void count_code_point(Measure *m, unsigned cp) {
    if (cp >= 0x80) m->ascii = 0;
    if (cp >= 0x10000) m->units += 2;
    else {
        m->units += 1;
        if (cp >= 0x4E00 && cp <= 0x9FA5) m->cjk += 1;
    }
}

/* One UTF-8 sequence starting at p (its lead byte is >= 0x80): its length, or 0 if invalid. */
static inline int utf8_sequence(const uint8_t *p, const uint8_t *end, unsigned *cp) {
    uint8_t c = p[0];
    if (c >= 0xC2 && c <= 0xDF) {
        if (end - p < 2 || (p[1] & 0xC0) != 0x80) return 0;
        *cp = ((unsigned)(c & 0x1F) << 6) | (p[1] & 0x3F);
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
        if (c == 0xED && p[1] >= 0xA0) return 0; /* surrogate */
        *cp = ((unsigned)(c & 0x0F) << 12) | ((unsigned)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0; /* overlong */
        if (c == 0xF4 && p[1] >= 0x90) return 0; /* beyond U+10FFFF */
        *cp = ((unsigned)(c & 0x07) << 18) | ((unsigned)(p[1] & 0x3F) << 12) | ((unsigned)(p[2] & 0x3F) << 6) |
              (p[3] & 0x3F);
        return 4;
    }
    return 0;
}

/* --- Python values ------------------------------------------------------------------------ */

/* Decode the escapes of a validated string span into dst (never longer than the span). */
JSONSCAN_FN Py_ssize_t unescape(const uint8_t *s, const uint8_t *e, char *dst) {
    char *d = dst;
    while (s < e) {
        if (*s != '\\') {
            *d++ = (char)*s++;
            continue;
        }
        uint8_t x = s[1];
        unsigned cp = 0;
        switch (x) {
        case 'b': *d++ = '\b'; s += 2; continue;
        case 'f': *d++ = '\f'; s += 2; continue;
        case 'n': *d++ = '\n'; s += 2; continue;
        case 'r': *d++ = '\r'; s += 2; continue;
        case 't': *d++ = '\t'; s += 2; continue;
        case 'u':
            hex4(s + 2, &cp);
            s += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned low = 0xDC00;
                hex4(s + 2, &low);
                s += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            if (cp < 0x80) *d++ = (char)cp;
            else if (cp < 0x800) {
                *d++ = (char)(0xC0 | (cp >> 6));
                *d++ = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                *d++ = (char)(0xE0 | (cp >> 12));
                *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
                *d++ = (char)(0x80 | (cp & 0x3F));
            } else {
                *d++ = (char)(0xF0 | (cp >> 18));
                *d++ = (char)(0x80 | ((cp >> 12) & 0x3F));
                *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
                *d++ = (char)(0x80 | (cp & 0x3F));
            }
            continue;
        default: /* quote, backslash, slash */
            *d++ = (char)x;
            s += 2;
            continue;
        }
    }
    return d - dst;
}

JSONSCAN_FN PyObject *ascii_str(const char *s, Py_ssize_t n) {
    PyObject *out = PyUnicode_New(n, 127);
    if (out) memcpy(PyUnicode_DATA(out), s, (size_t)n);
    return out;
}

/* The estimate of a text (frames/estimate.py): ceil(cjk / 1.5 + other / 4), exactly. */
JSONSCAN_FN long long tokens_of(Py_ssize_t units, Py_ssize_t cjk) {
    long long twelfths = 8LL * cjk + 3LL * (units - cjk);
    return (twelfths + 11) / 12;
}

/* Whether a measured text holds a character the estimate's scalar path does not measure
 * (U+9FA6-U+9FFF: frames.estimate.text_tokens gives None). Conservative: any character of
 * U+9F80-U+9FFF, raw or escaped. */
JSONSCAN_FN int past_cjk(const Val *v) {
    if (v->m.ascii) return 0;
    for (const uint8_t *p = v->s; p + 1 < v->e; p++) {
        if (p[0] == 0xE9 && (p[1] == 0xBE || p[1] == 0xBF)) return 1;
        if (p[0] == '\\' && v->e - p >= 6 && p[1] == 'u' && p[2] == '9' && (p[3] == 'f' || p[3] == 'F')) return 1;
    }
    return 0;
}

/* The UTF-16 units and CJK units of a validated UTF-8 span (a tool input as JSON text). */
JSONSCAN_FN void measure_raw(const uint8_t *p, const uint8_t *e, Measure *m) {
    m->units = 0;
    m->cjk = 0;
    m->ascii = 1;
    while (p < e) {
        while (e - p >= 8 && !(load64(p) & HIGHS)) {
            p += 8;
            m->units += 8;
        }
        if (p >= e) break;
        if (*p < 0x80) {
            p++;
            m->units++;
            continue;
        }
        unsigned cp = 0;
        int n = utf8_sequence(p, e, &cp);
        count_code_point(m, cp);
        p += n;
    }
}

/* The bytes of an object with the buffer protocol (bytes without a copy). */
typedef struct {
    const uint8_t *data;
    Py_ssize_t size;
    Py_buffer view;
    int has_view;
} Data;

JSONSCAN_FN int data_of(PyObject *raw, Data *d) {
    d->has_view = 0;
    if (PyBytes_CheckExact(raw)) {
        d->data = (const uint8_t *)PyBytes_AS_STRING(raw);
        d->size = PyBytes_GET_SIZE(raw);
        return 1;
    }
    if (PyObject_GetBuffer(raw, &d->view, PyBUF_SIMPLE) < 0) return 0;
    d->has_view = 1;
    d->data = d->view.buf;
    d->size = d->view.len;
    return 1;
}

JSONSCAN_FN void data_release(Data *d) {
    if (d->has_view) PyBuffer_Release(&d->view);
}

/* An int argument as a Py_ssize_t; 0 with an exception set when it is not one. */
JSONSCAN_FN int ssize_arg(PyObject *arg, Py_ssize_t *out) {
    *out = PyLong_AsSsize_t(arg);
    return !(*out == -1 && PyErr_Occurred());
}

/* The first byte of data[p:end] that is a line feed, or end. */
static inline const uint8_t *line_end(const uint8_t *p, const uint8_t *end) {
    const uint8_t *lf = memchr(p, '\n', (size_t)(end - p));
    return lf ? lf : end;
}

#endif /* CC_ANALYTICS_JSONSCAN_H */
