-- top_by_mean: the numeric metrics matching a tag query, ranked by their mean over
-- [start, end). Copy into your extensions directory (config extensionsDir) to serve it as
-- GET /extension/lua/top_by_mean?query=and(__name:cpu*)&start=…&end=…&limit=5
return {
  name = "top_by_mean",
  description = "Numeric metrics matching a tag query, ranked by their mean over [start, end) (default: the last hour)",
  params = {
    { name = "query", type = "string" },
    { name = "start", type = "number" },
    { name = "end", type = "number" },
    { name = "period", type = "integer" },
    { name = "limit", type = "integer" },
  },
  handler = function(p, ferrite)
    if p.query == nil then error("query is required, e.g. and(__name:cpu*)", 0) end
    local period = p.period or 60
    local stop = p["end"] or os.time()
    local start = p.start or (stop - 3600)
    start = start - start % period
    local count = math.max(1, math.ceil((stop - start) / period))

    local streams = {}
    for _, m in ipairs(ferrite.find(p.query)) do
      if string.find(m.type, "numeric", 1, true) then
        streams[#streams + 1] = { uuid = m.uuid, name = m.metric_name, kind = "numeric", transform = "average" }
      end
    end
    if #streams == 0 then return {} end

    local df4 = ferrite.fetch({ start = start, period = period, count = count, streams = streams,
                                reduce = { { label = "pass", method = "pass" } } })
    local ranked = {}
    for i = 1, #streams do
      local sum, n = 0, 0
      local row = df4.data[i]
      for j = 1, count do
        local v = row[j]
        -- a gap arrives as JSON null (not nil): count numbers only
        if type(v) == "number" then sum, n = sum + v, n + 1 end
      end
      if n > 0 then ranked[#ranked + 1] = { metric = df4.meta[i].label, uuid = streams[i].uuid, mean = sum / n, periods = n } end
    end
    table.sort(ranked, function(a, b) return a.mean > b.mean end)
    local top = {}
    for i = 1, math.min(p.limit or 10, #ranked) do top[i] = ranked[i] end
    return top
  end,
}
