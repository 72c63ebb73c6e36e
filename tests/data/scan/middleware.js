/*!
 * A query-string middleware as a CommonJS module whose export is a named function.
 * Written for ctxtools' scanner tests.
 */

'use strict';

var merge = require('utils-merge');
var parseUrl = require('parseurl');
var qs = require('qs');

module.exports = function query(options) {
  var opts = merge({}, options);
  var queryparse = qs.parse;

  return function query(req, res, next) {
    if (!req.query) {
      var val = parseUrl(req).query;
      req.query = queryparse(val, opts);
    }
    next();
  };
};
