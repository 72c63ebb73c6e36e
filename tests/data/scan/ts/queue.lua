-- A queue: "function fake() end" in a comment.
local util = require("demo.util")

local queue = {}

local function check(q)
   return q.first <= q.last + 1
end

function queue.new()
   return { first = 1, last = 0, items = {} }
end

function queue:push(value)
   local s = "function not_a_function() end"
   self.last = self.last + 1
   self.items[self.last] = value
end

queue.pop = function(q)
   local function inner() return 1 end
   return q.items[q.first]
end

do
   function queue.size(q) return q.last - q.first + 1 end
end

function global_helper() end

return queue
