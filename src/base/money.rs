//! Money: micro-credits (`u64`, an `i64` in wallets) inside, credits (a
//! float) only at the edges.

/// Credits (a float at the edge) to micro-credits, refusing what cannot be
/// money: negative, not finite, or beyond what an `i64` ledger can hold.
pub fn credits_to_micros(credits: f64) -> Result<u64, String> {
    if !credits.is_finite() || credits < 0.0 {
        return Err(format!("{credits} is not a non-negative amount of credits"));
    }
    let micros = (credits * 1_000_000.0).round();
    if micros > i64::MAX as f64 {
        return Err(format!("{credits} credits is too large"));
    }
    Ok(micros as u64)
}

/// Micro-credits to credits for display. Any integer amount converts
/// directly, never through a cast that could wrap a large `u64` negative.
pub fn micros_to_credits(micros: impl Into<i128>) -> f64 {
    micros.into() as f64 / 1_000_000.0
}

/// The largest amount of micro-credits one charge, one key's consumption
/// in a cycle, or a wallet may reach: what the `i64` wallet can hold. A
/// charge beyond it is refused, never wrapped nor cut to fit.
pub const MAX_CHARGE: u64 = i64::MAX as u64;

/// `units` at `price` micro-credits per `per` units, to the nearest
/// micro-credit; `None` when it exceeds [`MAX_CHARGE`].
pub fn charge_for(units: u64, price: u64, per: u64) -> Option<u64> {
    let per = u128::from(per.max(1));
    let total = u128::from(units)
        .checked_mul(u128::from(price))?
        .checked_add(per / 2)?
        / per;
    u64::try_from(total).ok().filter(|c| *c <= MAX_CHARGE)
}

/// The sum of two charges, `None` beyond [`MAX_CHARGE`].
pub fn add_charges(a: u64, b: u64) -> Option<u64> {
    a.checked_add(b).filter(|c| *c <= MAX_CHARGE)
}
