//! The text encodings of an ID: decimal, hex, Crockford base32, base58.

use pyo3::prelude::*;
use snowmint::{Encoding, Layout, SnowflakeId};

use crate::errors::OrRaise;
use crate::values;

/// Reads an encoding's name as the core does (any case).
fn encoding(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Encoding> {
    let text: String = name.extract()?;
    text.parse::<Encoding>().or_raise(py, Some(name))
}

/// Writes an ID in an encoding: ``"decimal"``, ``"hex"`` (16 digits, lower
/// case), ``"base32"`` (Crockford, 13 digits, upper case) or ``"base58"``
/// (Bitcoin's alphabet). Hex and base32 are written at a fixed width, so
/// that sorting the text sorts the IDs.
///
/// >>> import snowmint
/// >>> snowmint.to_text(1724551110457221119, "hex")
/// '17eed6190fcedfff'
/// >>> snowmint.to_text(1724551110457221119, "base32")
/// '1FVPP347WXQZZ'
/// >>> snowmint.to_text(1724551110457221119, "base58")
/// '51BRJMCGQge'
#[pyfunction]
#[pyo3(signature = (id, encoding = None))]
pub fn to_text(
    py: Python<'_>,
    id: &Bound<'_, PyAny>,
    encoding: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let encoding = match encoding {
        Some(name) => self::encoding(py, name)?,
        None => Encoding::Decimal,
    };
    Ok(values::id(py, &Layout::TWITTER, id)?
        .encode(encoding)
        .as_str()
        .to_owned())
}

/// Reads an ID written in an encoding (see ``to_text``). Hex may have a
/// ``0x`` prefix; hex and base32 are read in any case, and base32 reads
/// ``I`` and ``L`` as 1 and ``O`` as 0. Text that is not an ID raises
/// ``InvalidIdError``.
///
/// >>> import snowmint
/// >>> snowmint.from_text("17EED6190FCEDFFF", "hex")
/// 1724551110457221119
/// >>> snowmint.from_text("51BRJMCGQge", "base58")
/// 1724551110457221119
/// >>> snowmint.from_text("8000000000000000", "hex")
/// Traceback (most recent call last):
///     ...
/// snowmint.errors.InvalidIdError: ID 8000000000000000 is out of range (0..=7fffffffffffffff)
#[pyfunction]
#[pyo3(signature = (text, encoding = None))]
pub fn from_text(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    encoding: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let encoding = match encoding {
        Some(name) => self::encoding(py, name)?,
        None => Encoding::Decimal,
    };
    let input: String = text.extract()?;
    Layout::TWITTER
        .parse_id(encoding, &input)
        .map(SnowflakeId::as_u64)
        .or_raise(py, Some(text))
}
