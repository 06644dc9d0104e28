"""What users write, taken as they mean it: the dtype policy of put() and inline inputs,
int attributes where floats or int lists are expected, attribute errors before sending, and a
batch indexed before it ran."""

import gc
import weakref

import grpc
import numpy as np

import pytest
import torch

import onemodel
from onemodel import DataType

from conftest import assert_error


@pytest.mark.parametrize('value', [np.random.default_rng(0).standard_normal((4, 3)), 1.5,
                                   [1.0, 2.0], [[1, 2.5]], np.float64(3)],
                         ids=['float64-array', 'float', 'list', 'nested-list', 'numpy-scalar'])
def test_float64_and_python_floats_become_float(sess, value):
    t = sess.put(value)
    assert t.dtype == DataType.FLOAT
    np.testing.assert_allclose(t.numpy(), np.asarray(value, np.float32))
    sess.op('Relu', t)  # operations run on FLOAT: no Cast needed


def test_explicit_dtype_and_other_types_are_kept(sess):
    assert sess.put(np.ones(3), dtype='double').dtype == DataType.DOUBLE
    assert sess.put(np.ones(3), dtype=np.float64).dtype == DataType.DOUBLE
    assert sess.put(np.ones(3), dtype='float16').dtype == DataType.FLOAT16
    assert sess.put([1, 2, 3]).dtype == DataType.INT64
    assert sess.put(np.ones(3, np.int32)).dtype == DataType.INT32
    assert sess.put([True, False]).dtype == DataType.BOOL
    assert sess.put(np.ones(3, np.float16)).dtype == DataType.FLOAT16
    assert sess.put(torch.ones(3, dtype=torch.float64)).dtype == DataType.DOUBLE
    assert sess.upload(np.ones(3)).dtype == DataType.FLOAT
    assert sess.upload(np.ones(3), dtype='double').dtype == DataType.DOUBLE


def test_inline_float64_input_is_float(sess):
    x = sess.put(np.ones((2, 3), np.float32))
    y = sess.op('Add', x, np.full((2, 3), 0.5))  # a float64 array sent inline
    assert y.dtype == DataType.FLOAT
    assert y.numpy().tolist() == [[1.5] * 3] * 2


def test_int_attribute_where_a_float_is_expected(sess):
    x = sess.put(np.arange(6.0).reshape(2, 3))
    got = sess.op('Softmax', x, axis=1, scale=2).numpy()
    want = sess.op('Softmax', x, axis=1, scale=2.0).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('axes', [1, np.int64(1), [1]])
def test_int_attribute_where_int_list_is_expected(sess, axes):
    x = sess.put(np.arange(6.0).reshape(2, 3))
    assert sess.op('Sum', x, axes=axes).numpy().tolist() == [3.0, 12.0]


def test_server_still_refuses_other_kinds(sess):
    x = sess.put(np.ones((2, 3)))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('Softmax', x, axis=1.5)
    assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT,
                 "operation 0 (Softmax): attribute 'axis' must be an int (i) (got a float (f))")


@pytest.mark.parametrize('value,got', [(None, 'None'), ({'a': 1}, 'a dict'),
                                       ([1, 'x'], 'a list holding a str'),
                                       (np.ones((2, 2)), 'a 2-dimensional array')])
def test_attribute_values_checked_before_sending(client, value, got):
    with client.session() as s:
        before = s.stats().session.requests
        x = s.put(np.ones(3))
        with pytest.raises(onemodel.InvalidArgument) as ei:
            s.op('Sum', x, axes=value)
        assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT,
                     "operation 0 (Sum): attribute 'axes' must be an int (i), a float (f), a string "
                     "(s), a list of ints (ints) or a list of floats (floats) (got %s)" % got)
        b = s.batch()
        b.add('Relu', x)
        with pytest.raises(onemodel.InvalidArgument) as ei:
            b.add('Sum', x, axes=value)
        assert ei.value.details.startswith("operation 1 (Sum): attribute 'axes'")
        assert s.stats().session.requests == before + 1  # the put: no Run was sent


def test_attribute_int_out_of_range_checked_before_sending(sess):
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('Unsqueeze', np.ones(2), dim=1 << 70)
    assert "attribute 'dim' = %d does not fit in 64 bits" % (1 << 70) in ei.value.details


@pytest.mark.parametrize('op,attrs,shown', [
    ('Softmax', dict(axis=True), "attribute 'axis' = True"),
    ('Sum', dict(axes=[0, True]), "attribute 'axes' = [0, True]"),
    ('Sum', dict(axes=[1], keepdims=[True]), "attribute 'keepdims' = [True]")])
def test_bool_where_a_number_is_expected_is_refused_before_sending(client, op, attrs, shown):
    with client.session() as s:
        x = s.put(np.ones((2, 3)))
        before = s.stats().session.requests
        with pytest.raises(onemodel.InvalidArgument) as ei:
            s.op(op, x, **attrs)
        assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT, 'operation 0 (%s): %s: a bool where a '
                     'number is expected' % (op, shown), 'keepdims, nesterov')
        with pytest.raises(onemodel.InvalidArgument, match='a bool where a number is expected'):
            onemodel.apply(op, s.tensor(np.ones((2, 3))), **attrs)
        assert s.stats().session.requests == before + 1  # s.tensor's upload; no Run


def test_switch_attributes_take_bools(sess):
    x = sess.put(np.arange(6.0).reshape(2, 3))
    assert sess.op('Sum', x, axes=[1], keepdims=True).shape == (2, 1)
    assert sess.op('Sum', x, axes=[1], keepdims=False).shape == (2,)
    assert sess.op('Sum', x, axes=[1], keepdims=1).shape == (2, 1)


def test_batch_indexed_before_run_says_to_run_it(sess):
    b = sess.batch()
    y = b.add('Relu', np.ones(2))
    with pytest.raises(RuntimeError, match=r'has not run yet: call run\(\) first'):
        b[y]
    b.run()
    assert b[y].numpy().tolist() == [1.0, 1.0]
    with pytest.raises(IndexError, match=r'Output\(3\) is not an operation of this batch'):
        b[onemodel.Output(3)]


def test_an_output_of_another_batch_is_refused(sess):
    # Output(0) of `a` used in `b` named b's operation 0: [e^x + x] instead of an error
    x = sess.put(np.array([1.0, 2.0, 3.0], np.float32))
    a, b = sess.batch(), sess.batch()
    xa = a.add('Neg', x)
    b.add('Exp', x)
    with pytest.raises(ValueError, match=r'Output\(0\) is an output of another batch \(Batch\(1 '
                       r'operation, not run\)\), not of this one \(Batch\(1 operation, not run\)'
                       r'\).*add this operation to that batch too, or run that batch first'):
        b.add('Add', xa, x)
    y = b.add('Add', x, x)
    b.run()
    with pytest.raises(ValueError, match=r'another batch.*index the batch that returned it'):
        b[xa]
    a.run()
    c = sess.batch()
    with pytest.raises(ValueError, match=r'that batch has run: pass its result, that_batch\['):
        c.add('Add', xa, x)
    with pytest.raises(ValueError, match=r'came from Batch.add.*pass its result'):
        sess.run([{'op': 'Add', 'inputs': [xa, x]}])
    z = c.add('Add', a[xa], x)                                 # the result handle works
    c.run()
    assert c[z].numpy().tolist() == [0.0, 0.0, 0.0]
    assert b[y].numpy().tolist() == [2.0, 4.0, 6.0]


def test_an_output_holds_its_batch_weakly_and_outlives_it_safely(sess):
    """An Output kept no longer keeps its batch's operations and results alive; once that
    batch is gone, the Output is still refused elsewhere (not taken as a plain Output(i))."""
    a = sess.batch()
    xa = a.add('Neg', np.ones(3, np.float32))
    gone = weakref.ref(a)
    del a
    gc.collect()
    assert gone() is None
    b = sess.batch()
    b.add('Exp', np.ones(3, np.float32))
    with pytest.raises(ValueError, match='the batch that returned it no longer exists'):
        b.add('Add', xa, xa)


@pytest.mark.parametrize('key', [0.7, 0, np.int64(0), 'a1'], ids=repr)
def test_a_batch_is_indexed_by_its_outputs_only(sess, key):
    b = sess.batch()
    b.add('Relu', np.ones(2))
    b.run()
    with pytest.raises(TypeError, match='a Batch is indexed with an Output its add'):
        b[key]
