import { useState, type FormEvent } from 'react';
import { Login, useLogin, useNotify } from 'react-admin';
import { Box, Button, CardContent, CircularProgress, TextField, Typography } from '@mui/material';

/** One field: the API token (see docs/OPERATIONS.md, "tokens"). */
function TokenForm() {
  const login = useLogin();
  const notify = useNotify();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login({ token });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      setError(message);
      notify(message, { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <CardContent component="form" onSubmit={submit} aria-label="Sign in" sx={{ width: 320 }}>
      <Typography variant="h6" component="h1" gutterBottom>
        Call rating console
      </Typography>
      <TextField
        id="api-token"
        label="API token"
        type="password"
        autoComplete="current-password"
        value={token}
        onChange={(e) => setToken(e.target.value)}
        fullWidth
        autoFocus
        required
        error={error !== null}
        helperText={error ?? 'A token with the read scope (write to make changes)'}
        margin="normal"
      />
      <Box sx={{ mt: 2 }}>
        <Button type="submit" variant="contained" fullWidth disabled={busy} startIcon={busy ? <CircularProgress size={16} /> : undefined}>
          Sign in
        </Button>
      </Box>
    </CardContent>
  );
}

export function LoginPage() {
  return (
    <Login>
      <TokenForm />
    </Login>
  );
}
