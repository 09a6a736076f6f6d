// Preloaded into kinesis-local with `node -r`: every server it starts
// listens on 127.0.0.1 only. kinesis-local binds 0.0.0.0 and has no setting
// for the host, and a test server must not answer the network.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'object' && args[0] !== null) {
    args[0] = Object.assign({}, args[0], { host: '127.0.0.1' });
  } else if (typeof args[1] === 'string') {
    args[1] = '127.0.0.1';
  } else {
    args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
