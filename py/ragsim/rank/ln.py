"""The natural logarithm, correctly rounded, so a BM25 score has the same bits on every platform
(glibc in CPython and musl in Pyodide may differ in the last bit of `math.log`)."""

import math
from decimal import Context, Decimal
from functools import lru_cache

_LN = Context(prec=40)
_LN_QUICK = Context(prec=18)
# ln, mostly in integers: values times 2**96. _LN_TABLE[k] = round(ln(1 + k/64) * 2**96), _LN2 the same
# for ln 2 (tests/unit/test_bm25.py computes them again with Decimal).
_LN_BITS = 96
_LN2 = 54916777467707473351141471131
_LN_TABLE = (
    0, 1228368210522924201079951002, 2437981973683031897270060274,
    3629405365390424900751675639, 4803177389638314950708738232, 5959813442690547869496342033,
    7099806671920577301408496109, 8223629238268822127320902301, 9331733490407339481906020322,
    10424553057919640782367814786, 11502503870107404337692598789, 12565985106414521138793325042,
    13615380083903437530024121359, 14651057086721382096590756565, 15673370142048036580898171506,
    16682659746615643989453320816, 17679253547532294036705525223, 18663466980814678963812040645,
    19635603870744017016491661424, 20595956992894621323100061795, 21544808603445689681226716613,
    22482430937170608987414263455, 23409086676302025342222363157, 24325029392293021184781923793,
    25230503962333098831887785678, 26125746962330640988637594432, 27010987037939633518611545545,
    27886445255086386780218867797, 28752335431340614804114067437, 29608864449373488046243552980,
    30456232553652238021229151298, 31294633631435731566729646582, 32124255479057406416523745727,
    32945280054410402713787421886, 33757883716484039880547412904, 34562237452740438313793806001,
    35358507095064588073411050446, 36146853524970087459579965361, 36927432868695721367232483958,
    37700396682784668998110657781, 38465892130698103515515896910, 39224062150977983717932241836,
    39975045617439678339513773049, 40718977491843470263076373643, 41455988969464745898429766049,
    42186207617955589183370483806, 42909757509865392868593310901, 43626759349164810754216344515,
    44337330592095756615844442017, 45041585562650074997838854425, 45739635562960843946547867086,
    46431588978872908840819592660, 47117551380943088119399649198, 47797625621105442997421917233,
    48471911925222979207299269049, 49140507981734071566553180249, 49803509026589700453229270950,
    50461007924666197663775571356, 51113095247827557626490273082, 51759859349801423433015407151,
    52401386438023554980861278384, 53037760642596882110116575669, 53669064082503096097750462340,
    54295376929197098762767105685,
)
# What the integer sum may be off by, in units of 2**-96 (the table's and ln 2's roundings, times the
# exponent, and each truncation of the series: a few hundred at most), with room to spare.
_LN_SLACK = 1 << 16


@lru_cache(maxsize=65536)
def ln(x: float) -> float:
    """The natural logarithm, correctly rounded, so a score has the same bits on every platform.

    `math.log` comes from the C library, and glibc (CPython here) and musl (Pyodide) may differ
    in the last bit. Here x = u * 2**(e-1) with u in [1, 2) and u = (1 + k/64)(1 + r), r < 1/64:
    ln x = (e-1) ln 2 + ln(1 + k/64) + 2 atanh(r / (2 + r)), summed in integers (times 2**96) from
    a table and seven terms of the series. The sum lies within `_LN_SLACK` units of the true value;
    when both ends of that interval round to the same double (int / int rounds correctly), that
    double is the true value's. Otherwise (a value within about 1e-24 of a rounding boundary, or
    x = 1, or not a positive finite number) `_ln_decimal` decides.
    """
    if 0 < x < math.inf:
        m, e = math.frexp(x)  # x = m * 2**e, 0.5 <= m < 1
        f = int(m * 9007199254740992.0)  # m * 2**53, exact: 2**52 <= f < 2**53
        k = (f >> 46) - 64  # 0..63: u = f / 2**52 lies in [1 + k/64, 1 + (k+1)/64)
        num = (f << 6) - ((64 + k) << 52)  # r = num / den
        den = (64 + k) << 52
        z = (num << _LN_BITS) // ((den << 1) + num)  # z = r / (2 + r) < 1/129
        z2 = (z * z) >> _LN_BITS
        term = acc = z
        j = 3
        while term:  # z + z**3/3 + z**5/5 + ...: seven terms reach zero
            term = (term * z2) >> _LN_BITS
            acc += term // j
            j += 2
        y = (e - 1) * _LN2 + _LN_TABLE[k] + 2 * acc
        low = (y - _LN_SLACK) / (1 << _LN_BITS)
        if low == (y + _LN_SLACK) / (1 << _LN_BITS):
            return low
    return _ln_decimal(x)


def _ln_decimal(x: float) -> float:
    """The same, with Decimal's ln, correctly rounded at any precision (round half even). At 18
    digits: the true value lies within half a unit of the 18th digit of that result, so when the
    result one unit below and one unit above round to the same double, that double is the true
    value's. Otherwise 40 digits decide: rounding that to a double gives the correctly rounded
    result (a second rounding could only differ for a value within 1e-40 of a midpoint)."""
    d = Decimal(x)
    r = _LN_QUICK.ln(d)
    if r:
        unit = Decimal((0, (1,), r.adjusted() - 17))
        below = float(_LN.subtract(r, unit))  # exact: 19 digits at most
        if below == float(_LN.add(r, unit)):
            return below
    return float(_LN.ln(d))
