# Known answers for crates/core/tests/compare.rs, computed independently of the Rust code with
# SciPy 1.17.1 and statsmodels 0.15.0 from PyPI:
#   python3 -m venv /tmp/v && /tmp/v/bin/pip install scipy statsmodels
#   /tmp/v/bin/python crates/core/tests/known/intervals.py
from scipy.stats import binom, chi2, quantile_test
from statsmodels.stats.proportion import proportion_confint, confint_proportions_2indep
import numpy as np

print("# wilson (k, n) -> lo, hi")
for k, n in [(0, 10), (10, 10), (1, 1), (0, 1), (3, 10), (7, 8), (45, 50), (2, 10)]:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    print(f"({k}, {n}, {lo!r}, {hi!r}),")

print("# order-statistic ranks (q, n) -> lo, hi  (0 = no lower bound, n+1 = no upper bound)")
for q, n in [(0.95, 8), (0.5, 8), (0.5, 1), (0.5, 5), (0.5, 6), (0.95, 71), (0.95, 72), (0.95, 100), (0.5, 20), (0.99, 1000)]:
    lo = max(l for l in range(0, n + 1) if binom.cdf(l - 1, n, q) <= 0.025)
    hi = min(u for u in range(1, n + 2) if binom.sf(u - 1, n, q) <= 0.025)
    # SciPy's own quantile_test on the sample 1..n gives the same order statistics as bounds:
    ci = quantile_test(np.arange(1.0, n + 1), q=0, p=q).confidence_interval(0.95)
    print(f"({q}, {n}, {lo}, {hi}),  # scipy quantile_test CI: {ci.low}, {ci.high}")

print("# poisson garwood k -> lo, hi")
for k in [0, 1, 5, 30, 1000]:
    lo = 0.0 if k == 0 else chi2.ppf(0.025, 2 * k) / 2
    hi = chi2.ppf(0.975, 2 * k + 2) / 2
    print(f"({k}, {lo!r}, {hi!r}),")

print("# newcombe (k_new, n_new, k_base, n_base) -> lo, hi of p_new - p_base")
for a, b, c, d in [(3, 10, 1, 10), (0, 10, 0, 10), (10, 10, 5, 10), (50, 100, 30, 100), (1, 1, 0, 1), (10, 10, 0, 10)]:
    lo, hi = confint_proportions_2indep(a, b, c, d, method="newcomb", compare="diff", alpha=0.05)
    print(f"({a}, {b}, {c}, {d}, {lo!r}, {hi!r}),")

print("# splitmix64 first outputs for seeds 0 and 42")
M = (1 << 64) - 1
def splitmix(seed, k):
    s, out = seed, []
    for _ in range(k):
        s = (s + 0x9E3779B97F4A7C15) & M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        out.append(z ^ (z >> 31))
    return out
for seed in [0, 42]:
    print(seed, [hex(v) for v in splitmix(seed, 3)])
