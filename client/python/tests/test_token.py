"""The bearer token of Client and AsyncClient: token=, token_file=, $ONEMODEL_TOKEN_FILE
(the CLI's rules), whitespace, and the ValueErrors of an unusable token; against a server
started with --auth-token-file."""

import asyncio
import os

import pytest

import onemodel
from conftest import start_server, stop_and_check
from onemodel.aio import AsyncClient

TOKEN = 's3cret-token'


@pytest.fixture(scope='module')
def token_server(tmp_path_factory):
    """A server whose --auth-token-file holds TOKEN amid whitespace (the server strips it)."""
    path = tmp_path_factory.mktemp('token') / 'server-token'
    path.write_text('  %s \n\n' % TOKEN)
    s = start_server('--auth-token-file', str(path),
                     listen_args=['--listen', '127.0.0.1:0', '--metrics-listen', ''])
    yield s
    stop_and_check(s)


@pytest.fixture(autouse=True)
def no_token_file_variable(monkeypatch):
    monkeypatch.delenv('ONEMODEL_TOKEN_FILE', raising=False)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_token_read_with_its_newline_works(token_server, tmp_path):
    path = write(tmp_path, 'tok', TOKEN + '\n')
    with open(path) as f:
        assert token_server.client(token=f.read()).ping() == token_server.instance


def test_a_token_file_is_read_as_the_server_reads_its_own(token_server, tmp_path):
    path = write(tmp_path, 'tok', ' %s\t\r\n\n' % TOKEN)
    assert token_server.client(token_file=path).ping() == token_server.instance
    with pytest.raises(ValueError, match='spans several lines'):
        token_server.client(token_file=write(tmp_path, 'two', '%s\nnot the token\n' % TOKEN))


def test_the_variable_names_the_file_when_no_argument_does(token_server, tmp_path, monkeypatch):
    monkeypatch.setenv('ONEMODEL_TOKEN_FILE', write(tmp_path, 'tok', TOKEN + '\n'))
    assert token_server.client().ping() == token_server.instance
    wrong = write(tmp_path, 'wrong', 'wrong-token\n')
    for kwargs in (dict(token='wrong-token'), dict(token_file=wrong)):  # an argument wins
        with pytest.raises(onemodel.Unauthenticated):
            token_server.client(**kwargs).ping()
    monkeypatch.setenv('ONEMODEL_TOKEN_FILE', '')  # empty: as unset, no token
    with pytest.raises(onemodel.Unauthenticated):
        token_server.client().ping()


def test_a_token_file_that_is_not_a_small_regular_file_is_refused_at_once(tmp_path):
    """/dev/zero was read until memory ran out, and a FIFO nobody writes waited for good."""
    fifo = tmp_path / 'fifo'
    os.mkfifo(fifo)
    for path in ('/dev/zero', str(fifo), str(tmp_path)):
        with pytest.raises(OSError, match='is not a regular file'):
            onemodel.Client('127.0.0.1:1', token_file=path)
    huge = write(tmp_path, 'huge', 'x' * ((1 << 20) + 1))
    with pytest.raises(OSError, match='holds more than 1024 KiB'):
        onemodel.Client('127.0.0.1:1', token_file=huge)


def test_async_client_takes_the_same_token_arguments(token_server, tmp_path, monkeypatch):
    path = write(tmp_path, 'tok', TOKEN + '\n')

    async def ping(**kwargs):
        async with AsyncClient(token_server.grpc, **kwargs) as c:
            return await c.ping()
    assert asyncio.run(ping(token=TOKEN + '\n')) == token_server.instance
    assert asyncio.run(ping(token_file=path)) == token_server.instance
    monkeypatch.setenv('ONEMODEL_TOKEN_FILE', path)
    assert asyncio.run(ping()) == token_server.instance
    with pytest.raises(ValueError, match='spans several lines'):
        AsyncClient(token_server.grpc, token='a\nb')


@pytest.mark.parametrize('token,message', [
    ('', 'is empty'), (' \n', 'is empty'), ('abc\ndef', 'spans several lines'),
    ('abc\r\ndef', 'spans several lines'), ('ab\tc', "holds '\\\\t'"), ('tökén', "holds 'ö'"),
    # only spaces, tabs and line ends surround a token, as onemodeld's TokenInFile has it
    ('tok\x0c', "holds '\\\\x0c'"), ('\u00a0tok', "holds '\\\\xa0'")])
def test_unusable_tokens_are_refused_when_the_client_is_made(token, message):
    with pytest.raises(ValueError, match=r'the bearer token \(token=\) ' + message):
        onemodel.Client('127.0.0.1:1', token=token)


def test_unusable_token_files_are_refused(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match='is empty'):
        onemodel.Client('127.0.0.1:1', token_file=write(tmp_path, 'empty', ' \n\t\n'))
    with pytest.raises(ValueError, match='either as token= or as token_file='):
        onemodel.Client('127.0.0.1:1', token='t', token_file=write(tmp_path, 'tok', 't'))
    missing = str(tmp_path / 'missing')
    with pytest.raises(FileNotFoundError, match=r"token file '.*missing' \(token_file=\)"):
        onemodel.Client('127.0.0.1:1', token_file=missing)
    monkeypatch.setenv('ONEMODEL_TOKEN_FILE', missing)
    with pytest.raises(FileNotFoundError, match=r'\$ONEMODEL_TOKEN_FILE'):
        onemodel.Client('127.0.0.1:1')
