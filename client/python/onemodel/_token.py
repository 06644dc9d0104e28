"""The bearer token a client sends (Client and AsyncClient's token=, token_file=).

A token file is read by the rule onemodeld reads its --auth-token-file by, and the CLI its
--token-file (proto/bearer_token.h): the file's text without surrounding whitespace, one line
of printable ASCII. The variable ONEMODEL_TOKEN_FILE names the file when no argument says
otherwise (an explicit argument wins over the environment, as a CLI flag does); an empty
variable counts as unset. A token= is read by the same rule, so `token=open("tok").read()`
works.
"""

import os
import stat
from typing import Optional, Tuple

TOKEN_FILE_ENV = 'ONEMODEL_TOKEN_FILE'
# What "surrounding whitespace" is, as TokenInFile has it (not str.strip()'s Unicode spaces).
_SPACE = ' \t\r\n'


def bearer_token(token: Optional[str], token_file: Optional[str]) -> Optional[str]:
    """The token to send, or None for none: `token`, else the token in `token_file`, else in
    the file $ONEMODEL_TOKEN_FILE names. Raises ValueError for both arguments at once
    or an unusable token, OSError (naming the file) for a file that cannot be read."""
    if token is not None and token_file is not None:
        raise ValueError('give the bearer token either as token= or as token_file=, not both')
    if token is not None:
        return _checked(token, 'token=')
    if token_file is None:
        token_file = os.environ.get(TOKEN_FILE_ENV) or None
        source = 'the file $%s names' % TOKEN_FILE_ENV
    else:
        source = 'token_file='
    if token_file is None:
        return None
    return _checked(_text(token_file, source), "the file %r (%s)" % (token_file, source))


# The most a token file may hold, as onemodeld and the CLI have it (kMaxCredentialFileBytes).
MAX_TOKEN_FILE_BYTES = 1 << 20


def _text(path: str, source: str) -> str:
    """The text of the regular file `path` of at most MAX_TOKEN_FILE_BYTES (the rule of
    proto/credential_file.h: /dev/zero or a FIFO nobody writes is refused at once, not read
    without end); an OSError naming the file and where its path came from."""
    def refused(why: str) -> OSError:
        return OSError('the bearer token file %r (%s) %s' % (path, source, why))
    not_regular = ('is not a regular file (a FIFO, a device or a directory): name the file that '
                   'holds the token')
    try:  # looked at before it is opened (opening some devices acts), then through the fd
        fd = (os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
              if stat.S_ISREG(os.stat(path).st_mode) else None)
    except OSError as e:
        raise OSError(e.errno, 'cannot read the bearer token file %r (%s): %s'
                      % (path, source, e.strerror), path) from None
    if fd is None:
        raise refused(not_regular)
    data = b''
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        if regular:
            with os.fdopen(fd, 'rb', closefd=False) as f:  # read() loops to n or the end
                data = f.read(MAX_TOKEN_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if not regular:
        raise refused(not_regular)
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise refused('holds more than %d KiB, more than any token: name the token file itself'
                      % (MAX_TOKEN_FILE_BYTES >> 10))
    return data.decode('utf-8', errors='replace')


def _checked(token: str, source: str) -> str:
    """`token` without surrounding spaces, tabs and line ends; ValueError when that is empty, spans lines or
    holds a character other than printable ASCII (gRPC refuses such a header)."""
    if not isinstance(token, str):
        raise TypeError('the bearer token (%s) must be a str, got %s'
                        % (source, type(token).__name__))
    stripped = token.strip(_SPACE)
    if not stripped:
        raise ValueError('the bearer token (%s) is empty: pass the token the server was started '
                         'with (its --auth-token-file), or token=None for none' % source)
    if any(c in stripped for c in '\r\n'):
        raise ValueError('the bearer token (%s) spans several lines: pass the single line the '
                         "server's --auth-token-file holds" % source)
    odd = [c for c in stripped if not ' ' <= c <= '~']
    if odd:
        raise ValueError('the bearer token (%s) holds %r, which a gRPC header cannot carry: '
                         'use a token of printable ASCII characters' % (source, odd[0]))
    return stripped


def authorization(token: Optional[str]) -> Tuple[Tuple[str, str], ...]:
    """The call metadata that carries `token` (none for None)."""
    return (('authorization', 'Bearer ' + token),) if token is not None else ()
