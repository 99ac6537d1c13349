//! ID token verification: the signature against the provider's JWKS
//! (RS256 or ES256 only), then `iss`, `aud` (and `azp` when there are
//! several audiences), `exp`, `nbf` and the `nonce` this sign-in sent.
//!
//! The signature and the registered claims are checked by `jsonwebtoken`;
//! the claims are also read into a typed struct, so a claim of the wrong
//! JSON type (a string `exp`) is a refusal, never an absent claim.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::Refusal;

/// Seconds of clock difference allowed between the gateway and the
/// provider.
const LEEWAY_SECONDS: u64 = 60;

/// The claims a sign-in uses; the rest are kept for the role claim.
#[derive(Debug, Clone, Deserialize)]
pub struct IdClaims {
    pub sub: String,
    pub exp: i64,
    pub nonce: Option<String>,
    pub azp: Option<String>,
    pub aud: Value,
    pub email: Option<String>,
    pub email_verified: Option<Value>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// What the token must say.
pub struct Expected<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub nonce: &'a str,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    /// The token names a key the set does not have: fetch the set again.
    UnknownKey,
    Refused(Refusal),
}

pub fn verify(token: &str, keys: &JwkSet, expected: &Expected<'_>) -> Result<IdClaims, Failure> {
    let invalid = Failure::Refused(Refusal::InvalidToken);
    let header =
        jsonwebtoken::decode_header(token).map_err(|_| Failure::Refused(Refusal::InvalidToken))?;
    if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256) {
        return Err(invalid);
    }
    let jwk = match &header.kid {
        Some(kid) => keys.find(kid),
        // Without a kid, only a set of one key is unambiguous.
        None if keys.keys.len() == 1 => keys.keys.first(),
        None => None,
    }
    .ok_or(Failure::UnknownKey)?;
    let key = DecodingKey::from_jwk(jwk).map_err(|_| Failure::Refused(Refusal::InvalidToken))?;
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[expected.issuer]);
    validation.set_audience(&[expected.client_id]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.validate_nbf = true;
    validation.leeway = LEEWAY_SECONDS;
    let data = jsonwebtoken::decode::<IdClaims>(token, &key, &validation).map_err(|e| {
        Failure::Refused(match e.kind() {
            ErrorKind::InvalidAudience => Refusal::WrongAudience,
            ErrorKind::ExpiredSignature => Refusal::TokenExpired,
            ErrorKind::InvalidIssuer => Refusal::WrongIssuer,
            _ => Refusal::InvalidToken,
        })
    })?;
    let claims = data.claims;
    // OpenID Connect Core 3.1.3.7: with several audiences, the token must
    // have been issued to this client.
    if claims.aud.as_array().is_some_and(|a| a.len() > 1)
        && claims.azp.as_deref() != Some(expected.client_id)
    {
        return Err(Failure::Refused(Refusal::WrongAudience));
    }
    if claims.nonce.as_deref() != Some(expected.nonce) {
        return Err(Failure::Refused(Refusal::WrongNonce));
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7515, appendix A.2: an RS256 JWS and its RSA public key.
    const RFC7515_A2_JWS: &str = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw";
    const RFC7515_A2_N: &str = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ";

    fn rfc_keys() -> JwkSet {
        serde_json::from_value(serde_json::json!({
            "keys": [{ "kty": "RSA", "n": RFC7515_A2_N, "e": "AQAB" }]
        }))
        .unwrap()
    }

    #[test]
    fn the_rfc_7515_rs256_example_verifies_against_its_jwk() {
        let key = DecodingKey::from_jwk(&rfc_keys().keys[0]).unwrap();
        let mut validation = Validation::new(Algorithm::RS256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let data = jsonwebtoken::decode::<Value>(RFC7515_A2_JWS, &key, &validation).unwrap();
        assert_eq!(data.claims["iss"], "joe");
        assert_eq!(data.claims["http://example.com/is_root"], true);
    }

    #[test]
    fn a_changed_signature_or_payload_is_refused() {
        let key = DecodingKey::from_jwk(&rfc_keys().keys[0]).unwrap();
        let mut validation = Validation::new(Algorithm::RS256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let mut signature_changed = RFC7515_A2_JWS.to_owned();
        signature_changed.pop();
        signature_changed.push('x');
        let payload_changed = RFC7515_A2_JWS.replacen("eyJpc3MiOiJqb2U", "eyJpc3MiOiJqb2X", 1);
        for token in [signature_changed, payload_changed] {
            assert!(jsonwebtoken::decode::<Value>(&token, &key, &validation).is_err());
        }
    }

    #[test]
    fn the_rfc_example_is_refused_as_an_id_token() {
        // Signed by the key, but 2011's `exp` and no audience nor nonce:
        // never a sign-in.
        let expected = Expected {
            issuer: "joe",
            client_id: "tollgate",
            nonce: "n",
        };
        let refused = verify(RFC7515_A2_JWS, &rfc_keys(), &expected).unwrap_err();
        assert_eq!(refused, Failure::Refused(Refusal::InvalidToken));
    }

    #[test]
    fn a_token_signed_with_hs256_or_none_is_refused() {
        let expected = Expected {
            issuer: "joe",
            client_id: "tollgate",
            nonce: "n",
        };
        // {"alg":"HS256"} and {"alg":"none"} over the RFC payload.
        for header in ["eyJhbGciOiJIUzI1NiJ9", "eyJhbGciOiJub25lIn0"] {
            let (_, rest) = RFC7515_A2_JWS.split_once('.').unwrap();
            let token = format!("{header}.{rest}");
            assert_eq!(
                verify(&token, &rfc_keys(), &expected).unwrap_err(),
                Failure::Refused(Refusal::InvalidToken)
            );
        }
    }

    #[test]
    fn an_unknown_kid_asks_for_the_keys_again() {
        let expected = Expected {
            issuer: "joe",
            client_id: "tollgate",
            nonce: "n",
        };
        // {"alg":"RS256","kid":"later"}
        let (_, rest) = RFC7515_A2_JWS.split_once('.').unwrap();
        let token = format!("eyJhbGciOiJSUzI1NiIsImtpZCI6ImxhdGVyIn0.{rest}");
        let mut keys = rfc_keys();
        keys.keys[0].common.key_id = Some("first".into());
        assert_eq!(
            verify(&token, &keys, &expected).unwrap_err(),
            Failure::UnknownKey
        );
    }
}
