/** Entry module of the deployed source: registers every function; the deployment picks one by entry point. */
import './scheduler';
import './reader';
import './backfill';
import './writer';
