/* Dedup preparation in compiled code: normalisation, word and n-gram hashes, distinct shingle sets
 * and MinHash signatures for a batch of documents, with no Python object per word or shingle.
 *
 * Every value equals the numpy path's in filters/dedup_text.py and filters/minhash_signature.py
 * bit for bit (tests compare them); that file documents the formulas. Loaded with ctypes by
 * filters/dedup_native.py, which builds it with the system C compiler on first use.
 *
 * Documents are passed as one byte buffer with int64 offsets (document d is buf[off[d]:off[d+1]]).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- normalisation --------------------------------------------------------------------------
 * Input: UTF-8 text. ASCII bytes go through `table` (lower case;
 * punctuation, symbols and whitespace -> space). A multibyte character found in the sorted `cps`
 * is replaced by its folded bytes (repl[repl_off[i]:repl_off[i] + repl_len[i]]); any other is
 * copied. Runs of spaces become one space, none at either end. A document's flag says how its
 * normalised text splits into words: 0 at its spaces; 2 at its spaces and around each Han or Kana
 * character; 1 (or 3) it is not ASCII and holds a character that is neither a space nor a word
 * character (marks, format and control characters), which separates words as well: the last two
 * as `cm_space_words` does it, the way filters/dedup_text.py's split_words splits. cp_flag gives
 * each multibyte character's part of that flag. Bit 4 marks a character that NFKC does not map
 * one by one (the input need not be in NFKC: the folds of the others include it); Python
 * normalises such a text whole and passes it again. */

static int64_t find_cp(const uint32_t *cps, int64_t n, uint32_t cp) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = (lo + hi) >> 1;
        if (cps[mid] < cp) lo = mid + 1; else hi = mid;
    }
    return (lo < n && cps[lo] == cp) ? lo : -1;
}

/* length of the UTF-8 sequence starting with `lead` (1 for a stray continuation byte) */
static inline int seq_len(uint8_t lead) {
    if (lead < 0xC0) return 1;
    if (lead < 0xE0) return 2;
    if (lead < 0xF0) return 3;
    return 4;
}

static inline uint32_t decode_cp(const uint8_t *s, int len) {
    switch (len) {
    case 2: return ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
    case 3: return ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    default: return ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
                    ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
    }
}

/* Distinct multibyte code points of buf[0:len], in order of first appearance, written to `out`
 * (capacity `cap`); `seen` is a zeroed bitset of 0x110000 bits. Returns the count, or -1 when
 * `out` is full. */
int64_t cm_codepoints(const uint8_t *buf, int64_t len, uint8_t *seen, uint32_t *out, int64_t cap) {
    int64_t n = 0, i = 0;
    while (i < len) {
        uint8_t c = buf[i];
        if (c < 0x80) { i++; continue; }
        int l = seq_len(c);
        if (l == 1) { i++; continue; }  /* a stray continuation byte (not from Python's encoder) */
        if (i + l > len) break;
        uint32_t cp = decode_cp(buf + i, l);
        if (cp < 0x110000 && !(seen[cp >> 3] & (1u << (cp & 7)))) {
            seen[cp >> 3] |= (uint8_t)(1u << (cp & 7));
            if (n >= cap) return -1;
            out[n++] = cp;
        }
        i += l;
    }
    return n;
}

/* Appends byte b to out[*o], dropping a space at the start or after a space (*sp: the last byte
 * seen was a space; the start counts as one): runs of spaces collapse without a branch. */
static inline void put(uint8_t *out, int64_t *o, int *sp, uint8_t b) {
    const int is_sp = b == ' ';
    out[*o] = b;
    *o += !(is_sp & *sp);
    *sp = is_sp;
}

int64_t cm_normalize(const uint8_t *in, const int64_t *in_off, int64_t n_docs, const uint8_t *table,
                     const uint32_t *cps, const int64_t *repl_off, const int64_t *repl_len,
                     const uint8_t *cp_flag, int64_t n_cps, const uint8_t *repl,
                     uint8_t *out, int64_t *out_off, uint8_t *doc_flag) {
    int64_t o = 0;
    out_off[0] = 0;
    for (int64_t d = 0; d < n_docs; d++) {
        const int64_t start = o;
        uint8_t flag = 0;
        int sp = 1;  /* the last byte seen was a space (the start counts as one) */
        int odd = 0, wide = 0;  /* an ASCII byte that is no word character; a multibyte character */
        int64_t i = in_off[d];
        const int64_t end = in_off[d + 1];
        while (i < end) {
            const uint8_t c = in[i];
            if (c < 0x80) {  /* ASCII: one table lookup */
                const uint8_t t = table[c];
                odd |= !(t == ' ' || ((unsigned)(t - 'a') < 26u) || ((unsigned)(t - '0') < 10u));
                put(out, &o, &sp, t);
                i++;
                continue;
            }
            int l = seq_len(c);
            if (i + l > end) l = (int)(end - i);
            const int64_t k = l > 1 ? find_cp(cps, n_cps, decode_cp(in + i, l)) : -1;
            const uint8_t *src = in + i;
            int64_t src_len = l;
            if (k >= 0) {
                src = repl + repl_off[k];
                src_len = repl_len[k];
                flag |= cp_flag[k];
            }
            for (int64_t j = 0; j < src_len; j++) {
                const uint8_t b = src[j];
                odd |= b < 0x80 && !(b == ' ' || ((unsigned)(b - 'a') < 26u) || ((unsigned)(b - '0') < 10u));
                wide |= b >= 0x80;
                put(out, &o, &sp, b);
            }
            i += l;
        }
        if (sp && o > start) o--;  /* no space at the end */
        out_off[d + 1] = o;
        doc_flag[d] = flag | (odd & wide);  /* an all-ASCII text always splits at its spaces */
    }
    return o;
}

/* Words joined by single spaces, as Python's word splitter (filters/words.py: WORD_RE) joins
 * them: documents of flag 0 are copied as they are; in the others every character in the
 * inclusive code point `ranges` (n_ranges pairs: Han and Kana) is a word by itself, and every
 * character that is no word character (`sep[cp]` set for multibyte ones; ASCII control bytes, the
 * only ASCII bytes besides letters, digits and spaces that normalisation leaves) separates words,
 * with runs of spaces collapsed as above. `out` holds 5/3 of the input plus one byte per
 * document (a 3-byte character becomes at most 5). */
int64_t cm_space_words(const uint8_t *in, const int64_t *in_off, int64_t n_docs, const uint8_t *doc_flag,
                       const uint32_t *ranges, int64_t n_ranges, const uint8_t *sep,
                       uint8_t *out, int64_t *out_off) {
    int64_t o = 0;
    out_off[0] = 0;
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t i = in_off[d];
        const int64_t end = in_off[d + 1];
        if (doc_flag[d] == 0) {
            memcpy(out + o, in + i, end - i);
            o += end - i;
            out_off[d + 1] = o;
            continue;
        }
        const int64_t start = o;
        int sp = 1;
        while (i < end) {
            int l = seq_len(in[i]);
            if (i + l > end) l = (int)(end - i);
            int own_word = 0, separator = 0;
            if (l > 1) {
                const uint32_t cp = decode_cp(in + i, l);
                for (int64_t r = 0; r < n_ranges; r++)
                    own_word |= cp >= ranges[2 * r] && cp <= ranges[2 * r + 1];
                separator = cp < 0x110000 && sep[cp];
            } else {
                separator = in[i] < 0x20 || in[i] == 0x7F;
            }
            if (separator) {
                put(out, &o, &sp, ' ');
            } else {
                if (own_word && !sp) { out[o++] = ' '; sp = 1; }
                for (int j = 0; j < l; j++) put(out, &o, &sp, in[i + j]);
                if (own_word) { out[o++] = ' '; sp = 1; }
            }
            i += l;
        }
        if (sp && o > start) o--;
        out_off[d + 1] = o;
    }
    return o;
}

/* ---- shingles and signatures ------------------------------------------------------------------ */

#define P_MULT 0x9E3779B97F4A7C15ULL
#define LEN_MULT 0xC2B2AE3D27D4EB4FULL

static inline uint64_t fmix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 33);
}

static inline uint32_t fold32(uint64_t acc) {
    acc ^= acc >> 29;
    acc *= 0xBF58476D1CE4E5B9ULL;
    acc ^= acc >> 32;
    return (uint32_t)acc;
}

static inline uint32_t fmix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6BU;
    h ^= h >> 13;
    h *= 0xC2B2AE35U;
    return h ^ (h >> 16);
}

/* sorts v[0:n] (tmp: n more slots): insertion sort when short, else LSD radix sort by bytes */
static void sort_u32(uint32_t *v, uint32_t *tmp, int64_t n) {
    if (n < 64) {
        for (int64_t i = 1; i < n; i++) {
            uint32_t x = v[i];
            int64_t j = i - 1;
            while (j >= 0 && v[j] > x) { v[j + 1] = v[j]; j--; }
            v[j + 1] = x;
        }
        return;
    }
    int64_t count[256];
    uint32_t *src = v, *dst = tmp;
    for (int shift = 0; shift < 32; shift += 8) {
        memset(count, 0, sizeof count);
        for (int64_t i = 0; i < n; i++) count[(src[i] >> shift) & 0xFF]++;
        int64_t sum = 0;
        for (int k = 0; k < 256; k++) { int64_t c = count[k]; count[k] = sum; sum += c; }
        for (int64_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 0xFF]++] = src[i];
        uint32_t *t = src; src = dst; dst = t;
    }
    /* four passes: the sorted values are back in v */
}

#define POW_N 64       /* P^0 .. P^63: the weights of a word's first 64 bytes */
#define PERM_BLOCK 32  /* permutations whose minima one pass over a document's shingles keeps */

/* sig[q] = min(sig[q], min over i of a[q] * hv[i] + b[q]) for PERM_BLOCK permutations */
static inline void min_block(uint32_t *restrict sig, const uint32_t *restrict a, const uint32_t *restrict b,
                             const uint32_t *restrict hv, int64_t n) {
    uint32_t m[PERM_BLOCK], aa[PERM_BLOCK], bb[PERM_BLOCK];
    memcpy(m, sig, sizeof m);
    memcpy(aa, a, sizeof aa);
    memcpy(bb, b, sizeof bb);
    for (int64_t i = 0; i < n; i++) {
        const uint32_t h = hv[i];
        for (int q = 0; q < PERM_BLOCK; q++) {
            const uint32_t v = aa[q] * h + bb[q];
            m[q] = v < m[q] ? v : m[q];
        }
    }
    memcpy(sig, m, sizeof m);
}

/* With GCC on x86-64 the signature loop is also compiled for AVX2, picked at load time when the
 * CPU has it (the MinHash minima are 8 lanes wide there); the values are the same either way. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CM_CLONES
#endif

/* Per document: word hashes (words are the parts between single spaces), n-gram hashes folded to
 * 32 bits (fewer words than `ngram`: one shingle of all words), the sorted distinct shingles
 * (appended to `sets`, count in set_counts[d]) and the MinHash signature over them (sigs row d:
 * min over shingles of a[k] * fmix32(s) + b[k] mod 2^32; all 0xFFFFFFFF for no shingle).
 * `sets` holds sets_cap values. Returns 0; -1 when out of memory; -2 when `sets` is too small
 * (the batch has more words than the caller made room for). */
CM_CLONES int cm_signatures(const uint8_t *buf, const int64_t *off, int64_t n_docs, int ngram, const uint64_t *mult,
                  const uint32_t *a, const uint32_t *b, int num_perm,
                  uint32_t *sigs, uint32_t *sets, int64_t sets_cap, int64_t *set_counts) {
    int64_t cap = 0;
    uint64_t *wh = NULL;
    uint32_t *tmp = NULL;
    int64_t set_pos = 0;
    uint64_t pw[POW_N];
    pw[0] = 1;
    for (int j = 1; j < POW_N; j++) pw[j] = pw[j - 1] * P_MULT;
    for (int64_t d = 0; d < n_docs; d++) {
        const uint8_t *s = buf + off[d];
        const int64_t len = off[d + 1] - off[d];
        uint32_t *sig = sigs + d * (int64_t)num_perm;
        for (int k = 0; k < num_perm; k++) sig[k] = 0xFFFFFFFFU;
        set_counts[d] = 0;
        if (len == 0) continue;
        if (len + 1 > cap) {
            cap = 2 * (len + 1);
            free(wh); free(tmp);
            wh = malloc(cap * sizeof *wh);
            tmp = malloc(cap * sizeof *tmp);
            if (!wh || !tmp) { free(wh); free(tmp); return -1; }
        }
        int64_t nw = 0;
        uint64_t h = 0, p = pw[POW_N - 1], wlen = 0;
        for (int64_t i = 0; i <= len; i++) {
            if (i == len || s[i] == ' ') {
                wh[nw++] = fmix64(h + wlen * LEN_MULT);
                h = 0; p = pw[POW_N - 1]; wlen = 0;
            } else {  /* byte j of a word weighs P^j: from the table, no chain of multiplies */
                h += ((uint64_t)s[i] + 1) * (wlen < POW_N ? pw[wlen] : (p *= P_MULT));
                wlen++;
            }
        }
        const int64_t k = nw < ngram ? nw : ngram;
        const int64_t m = nw - k + 1;
        if (set_pos + m > sets_cap) { free(wh); free(tmp); return -2; }
        uint32_t *sh = sets + set_pos;
        for (int64_t i = 0; i < m; i++) {
            uint64_t acc = 0;
            for (int64_t j = 0; j < k; j++) acc += wh[i + j] * mult[j];
            sh[i] = fold32(acc);
        }
        sort_u32(sh, tmp, m);
        int64_t u = 0;
        for (int64_t i = 0; i < m; i++)
            if (i == 0 || sh[i] != sh[u - 1]) sh[u++] = sh[i];
        set_counts[d] = u;
        set_pos += u;
        for (int64_t i = 0; i < u; i++) tmp[i] = fmix32(sh[i]);
        int q0 = 0;
        for (; q0 + PERM_BLOCK <= num_perm; q0 += PERM_BLOCK)  /* a block of minima stays in registers */
            min_block(sig + q0, a + q0, b + q0, tmp, u);
        for (int64_t i = 0; i < u; i++)
            for (int q = q0; q < num_perm; q++) {
                const uint32_t v = a[q] * tmp[i] + b[q];
                sig[q] = v < sig[q] ? v : sig[q];
            }
    }
    free(wh); free(tmp);
    return 0;
}
