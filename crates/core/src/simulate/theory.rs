//! The queueing-theory results the simulation is checked against (and the lesson quotes).
//! Rates are per second, times in seconds.

/// M/M/1: mean time in system (wait + service), `1/(μ − λ)`; `None` when the queue grows without
/// bound (λ ≥ μ).
pub fn mm1_time_in_system(lambda: f64, mu: f64) -> Option<f64> {
    (lambda < mu).then(|| 1.0 / (mu - lambda))
}

/// M/M/c: the probability that an arrival has to wait (Erlang C); `None` when λ ≥ cμ.
pub fn erlang_c(c: u32, lambda: f64, mu: f64) -> Option<f64> {
    let a = lambda / mu;
    let rho = a / c as f64;
    if rho >= 1.0 || c == 0 {
        return None;
    }
    // Σ_{k<c} a^k/k!, and a^c/c!, built term by term so neither overflows.
    let mut term = 1.0;
    let mut sum = 0.0;
    for k in 0..c {
        sum += term;
        term *= a / (k + 1) as f64;
    }
    let tail = term / (1.0 - rho);
    Some(tail / (sum + tail))
}

/// M/M/c: mean wait in the queue before service, `C(c, a) / (cμ − λ)`.
pub fn mmc_mean_wait(c: u32, lambda: f64, mu: f64) -> Option<f64> {
    erlang_c(c, lambda, mu).map(|p| p / (c as f64 * mu - lambda))
}

/// The interactive response time law for a closed loop of `n` clients with think time `z` and
/// throughput `x`: `R = N/X − Z`. It holds for any service and think distribution.
pub fn response_time_law(n: u32, x: f64, z: f64) -> f64 {
    n as f64 / x - z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erlang_c_matches_known_values() {
        // One server: the waiting probability is ρ.
        assert!((erlang_c(1, 0.7, 1.0).unwrap() - 0.7).abs() < 1e-12);
        // c = 2, a = 1 (ρ = 0.5): C = (1/2 · 2) / (1 + 1 + 1) = 1/3.
        assert!((erlang_c(2, 1.0, 1.0).unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(erlang_c(2, 2.0, 1.0), None);
        assert_eq!(
            mm1_time_in_system(0.8, 1.0).map(|w| (w * 1e9).round() / 1e9),
            Some(5.0)
        );
        assert!((response_time_law(10, 2.0, 3.0) - 2.0).abs() < 1e-12);
    }
}
