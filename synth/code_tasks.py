"""Function-writing tasks for verified synthetic code: string, list, number and dict tasks at
three difficulty levels.

Each task has a docstring spec, one or more correct solutions written differently, buggy
variants of the kind a code generator writes (off-by-one, a lost tail, a missed case), an
input generator with edge cases, and an oracle. The oracle is written another way than the
solutions (library calls, enumeration) and gives the expected values the tests assert.
A task with a `slow` variant has a correct solution far too slow for the sandbox's time limit
on its largest input (naive recursive Fibonacci of 38 or more: tens of millions of calls), so
it is always caught, on any machine.
"""
from __future__ import annotations

import collections
import itertools
import math
import string
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from synth.rng import choice

WORDS = ("apple", "Banana", "cherry", "date", "Elder", "fig", "grape", "kiwi", "lemon", "mango", "Nut", "olive",
         "pear", "quince", "rose", "sage", "thyme", "ume", "vine", "wheat", "yam", "zest")


@dataclass
class Task:
    family: str
    category: str                   # string | list | number | dict
    difficulty: int                 # 1 .. 3
    names: tuple[str, ...]          # function names to draw from
    args: str                       # parameter list
    doc: str                        # spec; may use {k}
    solutions: tuple[str, ...]      # bodies (indented 4), may use {k}
    bugs: tuple[str, ...]           # buggy bodies
    inputs: Callable[[np.random.Generator, dict], list[tuple]]
    oracle: Callable[..., Any]      # oracle(params, *args)
    params: Callable[[np.random.Generator], dict] = lambda rng: {}
    slow: tuple[str, ...] = field(default=())   # correct but too slow on the large inputs


def _words(rng, lo=0, hi=6, sep=" "):
    n = int(rng.integers(lo, hi + 1))
    return sep.join(choice(rng, WORDS) for _ in range(n))


def _ints(rng, lo=-20, hi=20, n_lo=0, n_hi=8):
    return [int(x) for x in rng.integers(lo, hi + 1, int(rng.integers(n_lo, n_hi + 1)))]


def _caesar_oracle(p, s):
    k = p["k"] % 26
    lo, up = string.ascii_lowercase, string.ascii_uppercase
    return s.translate(str.maketrans(lo + up, lo[k:] + lo[:k] + up[k:] + up[:k]))


def _base_oracle(p, n):
    if n == 0:
        return "0"
    digits = []
    while n:
        n, r = divmod(n, p["b"])
        digits.append(str(r))
    return "".join(reversed(digits))


def _fib_oracle(p, n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def _invert_oracle(p, d):
    out = collections.defaultdict(list)
    for k in sorted(d):
        out[d[k]].append(k)
    return dict(out)


def _second_oracle(p, xs):
    s = sorted(set(xs))
    return s[-2] if len(s) >= 2 else None


def _chunks_oracle(p, xs):
    it = iter(xs)
    return [c for c in iter(lambda: list(itertools.islice(it, p["k"])), [])]


TASKS: tuple[Task, ...] = (
    # --- strings
    Task("reverse_words", "string", 1, ("reverse_words", "words_backwards", "flip_word_order"), "s",
         "Return the words of s (split on any whitespace) in reverse order, joined by single spaces.",
         ("    return ' '.join(reversed(s.split()))",
          "    words = s.split()\n    out = []\n    while words:\n        out.append(words.pop())\n    return ' '.join(out)"),
         ("    return ' '.join(s.split(' ')[::-1])", "    return s[::-1]"),
         lambda rng, p: [(_words(rng),) for _ in range(5)] + [("",), ("  two   spaces ",)],
         lambda p, s: " ".join(__import__("re").findall(r"\S+", s)[::-1])),
    Task("count_vowels", "string", 1, ("count_vowels", "vowel_count", "num_vowels"), "s",
         "Return how many characters of s are vowels (a, e, i, o, u), upper or lower case.",
         ("    return sum(1 for ch in s.lower() if ch in 'aeiou')",
          "    n = 0\n    for ch in s:\n        if ch in 'aeiouAEIOU':\n            n += 1\n    return n"),
         ("    return sum(1 for ch in s if ch in 'aeiou')", "    return len([ch for ch in s if ch in 'aeiouy'])"),
         lambda rng, p: [(_words(rng, 1, 5),) for _ in range(5)] + [("",), ("AEIOU xyz",)],
         lambda p, s: sum(s.count(v) + s.count(v.upper()) for v in "aeiou")),
    Task("caesar", "string", 2, ("caesar", "shift_letters", "rotate_letters"), "s",
         "Shift every ASCII letter of s by {k} places in the alphabet, wrapping around and keeping its case; "
         "leave other characters unchanged.",
         ("    out = []\n    for ch in s:\n        if 'a' <= ch <= 'z':\n            out.append(chr((ord(ch) - 97 + {k}) % 26 + 97))\n"
          "        elif 'A' <= ch <= 'Z':\n            out.append(chr((ord(ch) - 65 + {k}) % 26 + 65))\n"
          "        else:\n            out.append(ch)\n    return ''.join(out)",),
         ("    return ''.join(chr(ord(c) + {k}) if c.isalpha() else c for c in s)",
          "    return ''.join(chr((ord(c) - 97 + {k}) % 26 + 97) if c.isalpha() else c for c in s)"),
         lambda rng, p: [(_words(rng, 1, 4),) for _ in range(4)] + [("xyz XYZ!",), ("",)],
         _caesar_oracle, params=lambda rng: {"k": int(rng.integers(1, 26))}),
    Task("run_length", "string", 2, ("run_length", "rle_encode", "compress_runs"), "s",
         "Run-length encode s: each maximal run of one character becomes the character followed by the run "
         "length, e.g. 'aaab' -> 'a3b1'.",
         ("    out = []\n    i = 0\n    while i < len(s):\n        j = i\n        while j < len(s) and s[j] == s[i]:\n"
          "            j += 1\n        out.append(s[i] + str(j - i))\n        i = j\n    return ''.join(out)",),
         ("    out = []\n    n = 1\n    for a, b in zip(s, s[1:]):\n        if a == b:\n            n += 1\n"
          "        else:\n            out.append(a + str(n))\n            n = 1\n    return ''.join(out)",),
         lambda rng, p: [("".join(choice(rng, "aabbc") * int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 6)))),)
                         for _ in range(5)] + [("",), ("z",)],
         lambda p, s: "".join(k + str(len(list(g))) for k, g in itertools.groupby(s))),
    Task("is_palindrome", "string", 2, ("is_palindrome", "reads_same_backwards"), "s",
         "Return True if s reads the same forwards and backwards when only letters and digits are kept and case "
         "is ignored.",
         ("    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]",),
         ("    return s.lower() == s.lower()[::-1]", "    t = [c for c in s if c.isalnum()]\n    return t == t[::-1]"),
         lambda rng, p: [("A man, a plan, a canal: Panama",), ("No lemon, no melon",), ("abca",), ("",),
                         (_words(rng, 1, 2),), ("Was it a car or a cat I saw?",)],
         lambda p, s: (lambda t: t == t[::-1])("".join(filter(str.isalnum, s)).casefold())),
    # --- lists
    Task("sum_evens", "list", 1, ("sum_evens", "even_total", "add_even_numbers"), "xs",
         "Return the sum of the even integers in the list xs.",
         ("    return sum(x for x in xs if x % 2 == 0)",
          "    total = 0\n    for x in xs:\n        if not x % 2:\n            total += x\n    return total"),
         ("    return sum(x for x in xs if x % 2 == 1)", "    return sum(xs[::2])"),
         lambda rng, p: [(_ints(rng),) for _ in range(5)] + [([],), ([-4, -3, 2],)],
         lambda p, xs: sum(filter(lambda x: x % 2 == 0, xs))),
    Task("running_max", "list", 2, ("running_max", "prefix_maxima", "max_so_far"), "xs",
         "Return a list whose i-th element is the largest of xs[0..i].",
         ("    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out",),
         ("    out, m = [], 0\n    for x in xs:\n        m = max(m, x)\n        out.append(m)\n    return out",
          "    return [max(xs[:i]) for i in range(1, len(xs))]"),
         lambda rng, p: [(_ints(rng, n_lo=1),) for _ in range(5)] + [([],), ([-5, -7, -1],)],
         lambda p, xs: list(itertools.accumulate(xs, max))),
    Task("rotate_left", "list", 1, ("rotate_left", "shift_left", "rotate"), "xs",
         "Return xs rotated left by {k} places (element {k} comes first); an empty list stays empty.",
         ("    if not xs:\n        return []\n    k = {k} % len(xs)\n    return xs[k:] + xs[:k]",),
         ("    if not xs:\n        return []\n    k = {k} % len(xs)\n    return xs[-k:] + xs[:-k]",
          "    return xs[{k}:] + xs[:{k}]"),
         lambda rng, p: [(_ints(rng, n_lo=1),) for _ in range(4)] + [([],), ([1, 2],), ([1, 2, 3],), ([1, 2, 3, 4],),
                                                                    ([1, 2, 3, 4, 5],)],
         lambda p, xs: (lambda d: (d.rotate(-p["k"]), list(d))[1])(collections.deque(xs)),
         params=lambda rng: {"k": int(rng.integers(3, 8))}),
    Task("dedupe", "list", 1, ("dedupe", "unique_in_order", "drop_repeats"), "xs",
         "Return the distinct elements of xs in the order of their first occurrence.",
         ("    seen = set()\n    out = []\n    for x in xs:\n        if x not in seen:\n            seen.add(x)\n"
          "            out.append(x)\n    return out",),
         ("    return sorted(set(xs))", "    return [x for i, x in enumerate(xs) if x not in xs[i + 1:]]"),
         lambda rng, p: [(_ints(rng, -5, 5, 3, 10),) for _ in range(5)] + [([],), ([3, 1, 3, 2, 1],)],
         lambda p, xs: list(dict.fromkeys(xs))),
    Task("chunks", "list", 2, ("chunks", "split_every", "batched"), "xs",
         "Split xs into consecutive lists of {k} elements; the last one may be shorter.",
         ("    return [xs[i:i + {k}] for i in range(0, len(xs), {k})]",),
         ("    return [xs[i:i + {k}] for i in range(0, len(xs) - {k} + 1, {k})]",
          "    return [xs[i:i + {k}] for i in range(0, len(xs) - 1, {k})]"),
         lambda rng, p: [(_ints(rng, n_lo=1, n_hi=11),) for _ in range(5)] + [([],), (list(range(p["k"] + 1)),)],
         _chunks_oracle, params=lambda rng: {"k": int(rng.integers(2, 5))}),
    Task("second_largest", "list", 3, ("second_largest", "runner_up"), "xs",
         "Return the second largest distinct value of xs, or None when xs has fewer than two distinct values.",
         ("    best = second = None\n    for x in xs:\n        if best is None or x > best:\n"
          "            best, second = x, best\n        elif x != best and (second is None or x > second):\n"
          "            second = x\n    return second",),
         ("    return sorted(xs)[-2] if len(xs) >= 2 else None", "    s = sorted(set(xs))\n    return s[1] if len(s) >= 2 else None"),
         lambda rng, p: [(_ints(rng, -9, 9, 2, 8),) for _ in range(4)] + [([],), ([4, 4],), ([7, 7, 3],)],
         _second_oracle),
    Task("merge_sorted", "list", 3, ("merge_sorted", "merge_two"), "a, b",
         "Merge the sorted lists a and b into one sorted list without calling sort().",
         ("    i = j = 0\n    out = []\n    while i < len(a) and j < len(b):\n        if a[i] <= b[j]:\n"
          "            out.append(a[i])\n            i += 1\n        else:\n            out.append(b[j])\n            j += 1\n"
          "    return out + a[i:] + b[j:]",),
         ("    i = j = 0\n    out = []\n    while i < len(a) and j < len(b):\n        if a[i] <= b[j]:\n"
          "            out.append(a[i])\n            i += 1\n        else:\n            out.append(b[j])\n            j += 1\n"
          "    return out",),
         lambda rng, p: [(sorted(_ints(rng)), sorted(_ints(rng))) for _ in range(5)] + [([], [1]), ([2, 5], [])],
         lambda p, a, b: sorted(a + b)),
    # --- numbers
    Task("gcd", "number", 1, ("gcd", "greatest_common_divisor"), "a, b",
         "Return the greatest common divisor of the non-negative integers a and b (gcd(0, 0) is 0).",
         ("    while b:\n        a, b = b, a % b\n    return a",),
         ("    while b > 1:\n        a, b = b, a % b\n    return a", "    return min(a, b)"),
         lambda rng, p: [tuple(int(x) for x in rng.integers(0, 200, 2)) for _ in range(5)] + [(0, 0), (12, 18), (7, 5)],
         lambda p, a, b: math.gcd(a, b)),
    Task("digit_sum", "number", 1, ("digit_sum", "sum_of_digits"), "n",
         "Return the sum of the decimal digits of the integer n (its sign is ignored).",
         ("    n = abs(n)\n    total = 0\n    while n:\n        total += n % 10\n        n //= 10\n    return total",),
         ("    total = 0\n    while n > 0:\n        total += n % 10\n        n //= 10\n    return total",),
         lambda rng, p: [(int(rng.integers(-99999, 99999)),) for _ in range(5)] + [(0,), (-45,)],
         lambda p, n: sum(int(c) for c in str(abs(n)))),
    Task("is_prime", "number", 2, ("is_prime", "prime_check"), "n",
         "Return True if the integer n is a prime number.",
         ("    if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n        if n % i == 0:\n"
          "            return False\n        i += 1\n    return True",),
         ("    if n < 2:\n        return False\n    for i in range(2, int(n ** 0.5)):\n        if n % i == 0:\n"
          "            return False\n    return True",
          "    return n > 1 and all(n % i for i in range(2, n // 2))"),
         lambda rng, p: [(int(x),) for x in rng.integers(0, 120, 4)] + [(1,), (2,), (4,), (25,), (49,), (97,)],
         lambda p, n: n >= 2 and not any(n % d == 0 for d in range(2, n))),
    Task("to_base", "number", 3, ("to_base", "in_base"), "n",
         "Return the non-negative integer n written in base {b} as a string of digits ('0' for zero).",
         ("    if n == 0:\n        return '0'\n    digits = ''\n    while n > 0:\n        digits = str(n % {b}) + digits\n"
          "        n //= {b}\n    return digits",),
         ("    digits = ''\n    while n > 0:\n        digits = str(n % {b}) + digits\n        n //= {b}\n    return digits",
          "    digits = ''\n    while n > 0:\n        digits += str(n % {b})\n        n //= {b}\n    return digits or '0'"),
         lambda rng, p: [(int(x),) for x in rng.integers(1, 5000, 5)] + [(0,), (p["b"],)],
         _base_oracle, params=lambda rng: {"b": int(rng.integers(2, 10))}),
    Task("fibonacci", "number", 3, ("fibonacci", "fib", "nth_fibonacci"), "n",
         "Return the n-th Fibonacci number, with fibonacci(0) == 0 and fibonacci(1) == 1.",
         ("    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a",),
         ("    a, b = 1, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a",
          "    a, b = 0, 1\n    for _ in range(n - 1):\n        a, b = b, a + b\n    return b"),
         lambda rng, p: [(0,), (1,), (2,), (10,), (int(rng.integers(20, 30)),), (int(rng.integers(38, 43)),)],
         _fib_oracle,
         slow=("    if n < 2:\n        return n\n    return {name}(n - 1) + {name}(n - 2)",)),
    # --- dicts
    Task("word_freq", "dict", 2, ("word_freq", "count_words", "word_counts"), "text",
         "Return a dict mapping each lower-cased word of text (split on whitespace) to how often it occurs.",
         ("    out = {}\n    for w in text.lower().split():\n        out[w] = out.get(w, 0) + 1\n    return out",),
         ("    out = {}\n    for w in text.split():\n        out[w] = out.get(w, 0) + 1\n    return out",
          "    return {w: 1 for w in text.lower().split()}"),
         lambda rng, p: [(_words(rng, 1, 8),) for _ in range(5)] + [("",), ("Fig fig FIG",)],
         lambda p, text: dict(collections.Counter(text.lower().split()))),
    Task("invert", "dict", 2, ("invert", "group_keys_by_value"), "d",
         "Return a dict mapping each value of d to the sorted list of the keys that have it.",
         ("    out = {}\n    for k in sorted(d):\n        out.setdefault(d[k], []).append(k)\n    return out",),
         ("    return {v: [k] for k, v in d.items()}",
          "    out = {}\n    for k, v in d.items():\n        out.setdefault(v, []).append(k)\n    return out"),
         lambda rng, p: [({choice(rng, WORDS): int(rng.integers(0, 3)) for _ in range(int(rng.integers(0, 7)))},)
                         for _ in range(5)] + [({},), ({"b": 1, "a": 1},)],
         _invert_oracle),
    Task("merge_sum", "dict", 2, ("merge_sum", "add_counts"), "a, b",
         "Return a new dict with every key of a and b; a key in both maps to the sum of its two values.",
         ("    out = dict(a)\n    for k, v in b.items():\n        out[k] = out.get(k, 0) + v\n    return out",),
         ("    return {**a, **b}", "    out = dict(a)\n    for k, v in b.items():\n        if k in out:\n            out[k] += v\n    return out"),
         lambda rng, p: [({choice(rng, WORDS): int(rng.integers(-5, 9)) for _ in range(int(rng.integers(0, 5)))},
                          {choice(rng, WORDS): int(rng.integers(-5, 9)) for _ in range(int(rng.integers(0, 5)))})
                         for _ in range(5)] + [({}, {}), ({"x": 1}, {"x": 2, "y": 3})],
         lambda p, a, b: {k: a.get(k, 0) + b.get(k, 0) for k in list(a) + [k for k in b if k not in a]}),
    Task("group_by_initial", "dict", 3, ("group_by_initial", "index_by_letter"), "words",
         "Return a dict mapping each lower-cased first letter to the words of the list words that start with it, "
         "in their original order; empty strings are skipped.",
         ("    out = {}\n    for w in words:\n        if w:\n            out.setdefault(w[0].lower(), []).append(w)\n    return out",),
         ("    out = {}\n    for w in sorted(words):\n        if w:\n            out.setdefault(w[0].lower(), []).append(w)\n    return out",
          "    out = {}\n    for w in words:\n        if w:\n            out.setdefault(w[0], []).append(w)\n    return out"),
         lambda rng, p: [(_words(rng, 0, 8).split(),) for _ in range(5)] + [(["", "a"],), (["bat", "Bee", "ant", "banana"],)],
         lambda p, words: {c: [w for w in words if w and w[0].lower() == c]
                           for c in dict.fromkeys(w[0].lower() for w in words if w)}),
)
BY_FAMILY = {t.family: t for t in TASKS}
