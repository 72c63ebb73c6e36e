/*!
 * A request prototype in the style of Node.js web frameworks (CommonJS).
 * Written for ctxtools' scanner tests.
 */

'use strict';

/**
 * Module dependencies.
 */

var accepts = require('accepts');
var deprecate = require('depd')('shop');
var isIP = require('net').isIP;
const { parse: parseUrl, format } = require('url');
var http = require('http'), fresh = require('fresh');
var typeis = require('type-is');

/**
 * Request prototype.
 * @public
 */

var req = Object.create(http.IncomingMessage.prototype);

module.exports = req;

req.get =
req.header = function header(name) {
  var lc = name.toLowerCase();
  return this.headers[lc];
};

req.accepts = function () {
  var accept = accepts(this);
  return accept.types.apply(accept, arguments);
};

/**
 * Return the protocol string "http" or "https".
 */

defineGetter(req, 'protocol', function protocol() {
  var proto = this.connection.encrypted ? 'https' : 'http';
  return proto.split(/\s*,\s*/)[0];
});

defineGetter(req, 'host', deprecate.function(function host() {
  return this.get('Host');
}, 'req.host: Use req.hostname instead'));

defineGetter(req, 'fresh', function () {
  return fresh(this.headers, {});
});

exports.isFresh = function isFresh(etag) {
  return typeis.is(etag, ['json']) || isIP(etag) !== 0;
};

process.on('exit', function onExit(code) {
  format(parseUrl('/bye?code=' + code));
});

function defineGetter(obj, name, getter) {
  Object.defineProperty(obj, name, {
    configurable: true,
    enumerable: true,
    get: getter
  });
}
