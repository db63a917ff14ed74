-- Drives the ShardLens server from Neovim 0.7 (vim.lsp.start_client) and writes what the server answered as JSON.
-- Arguments come from environment variables: SHARDLENS_SERVER (dist/server.js), SHARDLENS_OUT (result file),
-- SHARDLENS_HOVER_LINE / SHARDLENS_HOVER_COL (zero-based position of a key to hover), and optionally SHARDLENS_SELECT /
-- SHARDLENS_SELECT_LINE: the configuration function whose "Analyse this one" lens to run, and the line of its name.
local out = {}
local server = os.getenv('SHARDLENS_SERVER')
local root = vim.fn.getcwd()
local id = vim.lsp.start_client({ name = 'shardlens', cmd = { 'node', server, '--stdio' }, root_dir = root })
out.started = id ~= nil
if id then
  vim.lsp.buf_attach_client(0, id)
  out.got_diagnostics = vim.wait(10000, function() return #vim.diagnostic.get(0) > 0 end, 50)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out.diagnostics, { lnum = d.lnum, col = d.col, message = d.message, severity = d.severity, code = d.code })
  end
  local uri = vim.uri_from_bufnr(0)
  local pos = { line = tonumber(os.getenv('SHARDLENS_HOVER_LINE')), character = tonumber(os.getenv('SHARDLENS_HOVER_COL')) }
  local hover = vim.lsp.buf_request_sync(0, 'textDocument/hover', { textDocument = { uri = uri }, position = pos }, 10000)
  out.hover = hover and hover[id] and hover[id].result or vim.NIL
  local hints = vim.lsp.buf_request_sync(0, 'textDocument/inlayHint', {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 10000, character = 0 } },
  }, 10000)
  out.hints = hints and hints[id] and hints[id].result or vim.NIL
  local lenses = vim.lsp.buf_request_sync(0, 'textDocument/codeLens', { textDocument = { uri = uri } }, 10000)
  out.lenses = lenses and lenses[id] and lenses[id].result or vim.NIL
  -- Run a lens the way vim.lsp.codelens.run() does for a command Neovim has no handler for: workspace/executeCommand.
  local select = os.getenv('SHARDLENS_SELECT')
  if select and out.lenses ~= vim.NIL then
    for _, l in ipairs(out.lenses) do
      if l.command and l.command.title == 'Analyse this one' and l.command.arguments and l.command.arguments[2] == select then
        out.executed = l.command
        vim.lsp.buf_request_sync(0, 'workspace/executeCommand', l.command, 10000)
        break
      end
    end
    -- The chosen function becomes the analysed one: its name's lens row gets the Dashboard lens.
    local want = tonumber(os.getenv('SHARDLENS_SELECT_LINE'))
    out.selected = false
    for _ = 1, 75 do
      local r = vim.lsp.buf_request_sync(0, 'textDocument/codeLens', { textDocument = { uri = uri } }, 5000)
      out.lenses_after = r and r[id] and r[id].result or vim.NIL
      for _, l in ipairs(out.lenses_after ~= vim.NIL and out.lenses_after or {}) do
        if l.command and l.command.title == 'Dashboard' and l.range.start.line == want then out.selected = true end
      end
      if out.selected then break end
      vim.wait(200)
    end
  end
  vim.lsp.stop_client(id)
end
local f = io.open(os.getenv('SHARDLENS_OUT'), 'w')
f:write(vim.fn.json_encode(out))
f:close()
vim.cmd('qa!')
